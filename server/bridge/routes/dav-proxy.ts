import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express'
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { pipeline, type Readable } from 'node:stream'
import { StringDecoder } from 'node:string_decoder'
import type { Logger } from '../../shared/logger.ts'
import { currentUser } from '../auth/caller.ts'
import { createDavUrlMapper, parseClientDavPath, rewriteHrefs, rewriteIfHeader, type DavUrlMapper } from '../dav-urls.ts'
import { BridgeError, forbidden, gatewayBadResponse, gatewayTimeout, gatewayUnreachable, notFound, setSurface } from '../errors.ts'
import type { GatewayClient } from '../gateway-client.ts'
import type { PathMap } from '../path-map.ts'

export interface DavProxyDeps {
  auth: RequestHandler
  gateway: GatewayClient
  pathMap: PathMap
  logger: Logger
}

// Hop-by-hop headers (RFC 9110 §7.6.1) and what the bridge itself owns.
const DROP_REQUEST = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'authorization',
  'cookie',
  'expect',
])
const DROP_RESPONSE = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'www-authenticate',
  'set-cookie',
])
// Multistatus and lock bodies are small metadata; a cap keeps a runaway answer from filling memory.
/** The most of an XML answer held while waiting for the end of a <response> (a broken gateway). */
const MAX_REWRITE_BYTES = 16 * 1024 * 1024

/**
 * The user's WebDAV files area (`/remote.php/dav/files/<user>/…` and legacy
 * `/remote.php/webdav/…`) as a streaming reverse proxy onto the gateway path
 * given by the path map. Bodies flow through untouched, except XML answers
 * whose hrefs are rewritten back to the client's URLs.
 */
export function createDavProxy(deps: DavProxyDeps): Router {
  const router = Router()
  const davSurface: RequestHandler = (req, _res, next) => {
    setSurface(req, 'dav')
    next()
  }
  router.use('/remote.php', davSurface, deps.auth, async (req, res, next) => {
    const user = currentUser(res)
    const rawUrl = req.originalUrl
    const q = rawUrl.indexOf('?')
    const rawPath = q === -1 ? rawUrl : rawUrl.slice(0, q)
    const query = q === -1 ? '' : rawUrl.slice(q)
    const target = parseClientDavPath(rawPath, user.id)
    if (!target) throw notFound('Not a WebDAV files area of this server')
    const method = req.method.toUpperCase()
    // As in Nextcloud, the root of a user's files can be read and written into, not removed or replaced.
    if (target.userPath === '/' && (method === 'DELETE' || method === 'MOVE'))
      throw forbidden('The root of your files cannot be moved or deleted')

    const mapper = createDavUrlMapper({
      pathMap: deps.pathMap,
      userId: user.id,
      base: target.base,
      gatewayUrl: deps.gateway.url,
      clientHosts: [req.headers.host, req.host],
    })
    const headers = forwardHeaders(req.headers, mapper, method)
    if (headers.destination !== undefined) {
      const dest = mapper.clientUrlToGateway(String(headers.destination))
      if (dest.userPath === '/') throw forbidden('The root of your files cannot be replaced')
      headers.destination = dest.url
    }
    await deps.gateway.ensureFolder(deps.pathMap.rootOf(user.id))
    forward(req, res, next, { method, path: mapper.gatewayUrlPath(target) + query, headers, mapper, deps })
  })
  return router
}

function forwardHeaders(incoming: IncomingHttpHeaders, mapper: DavUrlMapper, method: string): OutgoingHttpHeaders {
  const listed = new Set(
    String(incoming.connection ?? '')
      .toLowerCase()
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  )
  const out: OutgoingHttpHeaders = {}
  for (const [name, value] of Object.entries(incoming)) {
    if (value === undefined || DROP_REQUEST.has(name) || listed.has(name)) continue
    out[name] = value
  }
  if (typeof out.if === 'string') out.if = rewriteIfHeader(out.if, (url) => mapper.clientUrlToGateway(url).url, incoming.host)
  // XML answers are rewritten, which needs them uncompressed.
  if (method !== 'GET' && method !== 'HEAD') delete out['accept-encoding']
  return out
}

export interface ForwardOptions {
  method: string
  /** Gateway URL path with query. */
  path: string
  headers: OutgoingHttpHeaders
  mapper: DavUrlMapper
  deps: Pick<DavProxyDeps, 'gateway' | 'logger'>
  /** What to send; the client's own request body by default. */
  body?: Readable
}

/** Streams one request to the gateway and its answer back to the client (hrefs rewritten). */
export function forward(req: Request, res: Response, next: NextFunction, o: ForwardOptions): void {
  const { gateway, logger } = o.deps
  const url = gateway.url
  if (gateway.authorization) o.headers.authorization = gateway.authorization
  o.headers.host = url.host
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest
  const upstream = send({
    protocol: url.protocol,
    hostname: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port || undefined,
    method: o.method,
    path: o.path,
    headers: o.headers,
    agent: gateway.agent,
  })

  let settled = false
  let timedOut = false
  let timer: NodeJS.Timeout | undefined
  const fail = (err: BridgeError) => {
    if (settled) return
    settled = true
    clearTimeout(timer)
    req.unpipe(upstream)
    next(err)
  }
  // The gateway has timeoutMs to connect, and then timeoutMs after the whole
  // request was sent to start answering; a slow upload is not its fault.
  const arm = () => {
    clearTimeout(timer)
    timer = setTimeout(() => {
      timedOut = true
      upstream.destroy()
      fail(gatewayTimeout())
    }, gateway.timeoutMs)
  }
  let phase: 'connect' | 'upload' | 'answer' = 'connect'
  const connected = () => {
    if (phase !== 'connect') return
    phase = 'upload'
    clearTimeout(timer)
  }
  arm()
  upstream.on('socket', (socket) => {
    if (socket.connecting) socket.once('connect', connected)
    else connected()
  })
  upstream.on('finish', () => {
    phase = 'answer'
    arm()
  })
  upstream.on('error', (err) => {
    if (timedOut) return
    logger.debug({ err: err.message }, 'gateway request failed')
    if (res.headersSent) res.destroy()
    else fail(gatewayUnreachable())
  })
  // A client that goes away must not leave an upload hanging on the gateway.
  res.on('close', () => {
    if (!res.writableFinished) upstream.destroy()
  })

  upstream.on('response', (up) => {
    clearTimeout(timer)
    if (settled) return up.resume()
    if (up.statusCode === 401 || up.statusCode === 407) {
      up.resume()
      return fail(gatewayBadResponse("The gateway refused the bridge's credentials"))
    }
    settled = true
    respond(o.method, up, res, o.mapper, logger)
  })

  // Not pipeline(): a gateway failure must not destroy the client's socket before we answer it.
  const body = o.body ?? req
  body.pipe(upstream)
  body.on('error', (err) => {
    logger.debug({ err: err.message }, 'request body failed')
    upstream.destroy()
    if (!res.headersSent) fail(gatewayUnreachable())
  })
}

function responseHeaders(up: IncomingMessage, mapper: DavUrlMapper): OutgoingHttpHeaders {
  const listed = new Set(
    String(up.headers.connection ?? '')
      .toLowerCase()
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  )
  const out: OutgoingHttpHeaders = {}
  for (const [name, value] of Object.entries(up.headers)) {
    if (value === undefined || DROP_RESPONSE.has(name) || listed.has(name)) continue
    out[name] = value
  }
  for (const name of ['location', 'content-location']) {
    if (typeof out[name] !== 'string') continue
    const mapped = mapper.gatewayToClient(out[name] as string)
    if (mapped === undefined) delete out[name]
    else out[name] = mapped
  }
  return out
}

const isXml = (type: string | undefined) => /[/+]xml\b/i.test(type ?? '')

function respond(method: string, up: IncomingMessage, res: Response, mapper: DavUrlMapper, logger: Logger): void {
  const headers = responseHeaders(up, mapper)
  const status = up.statusCode ?? 502
  const rewrite = method !== 'GET' && method !== 'HEAD' && isXml(up.headers['content-type']) && !up.headers['content-encoding']
  if (!rewrite) {
    res.writeHead(status, headers)
    // pipeline() puts 7 'close' listeners on its destination; beside the request log's, the connection
    // cap's, the proxy's own and an upload's, that is 11 on one response: a fixed count, not a leak.
    res.setMaxListeners(res.getMaxListeners() + 8)
    pipeline(up, res, (err) => {
      if (err) logger.debug({ err: err.message }, 'proxied response interrupted')
    })
    return
  }
  // Rewritten as it streams, up to the last complete <response>: a listing of thousands of
  // files never sits whole in memory nor in one synchronous rewrite.
  delete headers['content-length']
  res.writeHead(status, headers)
  const decoder = new StringDecoder('utf8')
  let pending = ''
  const flush = (text: string) => rewriteHrefs(text, mapper.gatewayToClient)
  up.on('data', (chunk: Buffer) => {
    pending += decoder.write(chunk)
    const cut = lastResponseEnd(pending)
    if (cut > 0) {
      res.write(flush(pending.slice(0, cut)))
      pending = pending.slice(cut)
    }
    if (pending.length > MAX_REWRITE_BYTES) {
      up.destroy()
      res.destroy()
    }
  })
  up.on('error', () => res.destroy())
  up.on('end', () => res.end(flush(pending + decoder.end())))
}

/** Where the last complete `</response>` (any prefix) of `text` ends; 0 when there is none. */
function lastResponseEnd(text: string): number {
  let end = 0
  for (const m of text.matchAll(RESPONSE_END)) end = m.index + m[0].length
  return end
}
const RESPONSE_END = /<\/(?:[A-Za-z_][\w.-]*:)?response\s*>/g
