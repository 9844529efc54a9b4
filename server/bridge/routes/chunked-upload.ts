import { Router, type Request, type RequestHandler, type Response } from 'express'
import type { OutgoingHttpHeaders } from 'node:http'
import type { Logger } from '../../shared/logger.ts'
import { currentUser } from '../auth/caller.ts'
import { createDavUrlMapper, DAV_FILES_PREFIX } from '../dav-urls.ts'
import { BridgeError, badRequest, forbidden, notFound, setSurface } from '../errors.ts'
import type { GatewayClient } from '../gateway-client.ts'
import type { PathMap } from '../path-map.ts'
import type { UploadStore } from '../upload-store.ts'
import { forward } from './dav-proxy.ts'

export const UPLOADS_PREFIX = '/remote.php/dav/uploads/'

export interface ChunkedUploadDeps {
  auth: RequestHandler
  gateway: GatewayClient
  pathMap: PathMap
  uploads: UploadStore
  logger: Logger
  /** Why a chunk of so many bytes must be refused (507) to keep the room kept for sealing; undefined when it fits. */
  chunkRefusal?: (bytes?: number) => Promise<string | undefined>
}

// Upload ids and chunk names become file names on the bridge's disk.
const SAFE_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/
// Headers of the assembling MOVE that the gateway's PUT should see.
const PASSED_ON = ['x-oc-mtime', 'oc-checksum', 'if', 'if-match', 'if-none-match', 'content-type']

const xmlEscape = (s: string) => s.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'))

function parseUploadPath(req: Request, userId: string): { uploadId?: string; chunk?: string } {
  const rawPath = req.originalUrl.split('?')[0]
  const segments = rawPath.slice(UPLOADS_PREFIX.length).split('/').filter(Boolean)
  let decoded: string[]
  try {
    decoded = segments.map(decodeURIComponent)
  } catch {
    throw badRequest('Path has a malformed percent-encoding')
  }
  const [owner, uploadId, chunk, ...rest] = decoded
  if (owner !== userId) throw forbidden('This uploads area belongs to another user')
  if (rest.length > 0) throw notFound('No such upload')
  if (uploadId !== undefined && !SAFE_NAME.test(uploadId)) throw badRequest('Invalid upload id')
  if (chunk !== undefined && chunk !== '.file' && !SAFE_NAME.test(chunk)) throw badRequest('Invalid chunk name')
  return { uploadId, chunk }
}

/**
 * Nextcloud's chunked upload (dav chunking 1.0 and its v2 extension):
 * MKCOL an upload folder, PUT chunks, MOVE `.file` onto the target in the
 * files area, which streams the chunks in order to the gateway as one PUT.
 */
export function createChunkedUploadRouter(deps: ChunkedUploadDeps): Router {
  const router = Router()
  const davSurface: RequestHandler = (req, _res, next) => {
    setSurface(req, 'dav')
    next()
  }
  router.use(UPLOADS_PREFIX, davSurface, deps.auth, async (req, res, next) => {
    const user = currentUser(res)
    const { uploadId, chunk } = parseUploadPath(req, user.id)
    const method = req.method.toUpperCase()
    const base = `${UPLOADS_PREFIX}${encodeURIComponent(user.id)}`

    if (uploadId === undefined) {
      if (method === 'PROPFIND') return void sendMultistatus(res, [{ href: `${base}/`, collection: true }])
      throw new BridgeError(405, 'METHOD_NOT_ALLOWED', 'Only an upload folder can be created here')
    }
    const exists = await deps.uploads.exists(user.id, uploadId)

    if (chunk === undefined) {
      switch (method) {
        case 'MKCOL': {
          const created = await deps.uploads.create(user.id, uploadId)
          if (created === 'full') {
            // As Sabre's InsufficientStorage for a quota: the client may finish or delete uploads and try again.
            throw new BridgeError(507, 'INSUFFICIENT_STORAGE', 'Too many unfinished uploads; finish or delete some before starting another')
          }
          if (!created) throw new BridgeError(405, 'ALREADY_EXISTS', 'The upload folder already exists')
          return void res.status(201).end()
        }
        case 'DELETE':
          if (!(await deps.uploads.remove(user.id, uploadId))) throw notFound('No such upload')
          return void res.status(204).end()
        case 'PROPFIND': {
          if (!exists) throw notFound('No such upload')
          const entries: MultistatusEntry[] = [{ href: `${base}/${encodeURIComponent(uploadId)}/`, collection: true }]
          if (req.headers.depth !== '0') {
            for (const c of await deps.uploads.chunks(user.id, uploadId)) {
              entries.push({
                href: `${base}/${encodeURIComponent(uploadId)}/${encodeURIComponent(c.name)}`,
                size: c.size,
                modifiedMs: c.modifiedMs,
              })
            }
          }
          return void sendMultistatus(res, entries)
        }
        default:
          throw new BridgeError(405, 'METHOD_NOT_ALLOWED', `${method} is not supported on an upload folder`)
      }
    }

    if (method === 'PUT' && chunk !== '.file') {
      if (!exists) throw new BridgeError(409, 'CONFLICT', 'Create the upload folder (MKCOL) first')
      // A disk that cannot be read is not refused here: the write itself then says whether it fits.
      const refusal = await deps.chunkRefusal?.(Number(req.headers['content-length']) || 0).catch(() => undefined)
      if (refusal) throw new BridgeError(507, 'INSUFFICIENT_STORAGE', refusal, { 'Retry-After': '60' })
      const put = await deps.uploads.putChunk(user.id, uploadId, chunk, req)
      // Sabre: a PUT into a collection that no longer exists is a 409 Conflict.
      if (put === 'gone') throw new BridgeError(409, 'CONFLICT', 'The upload folder was deleted or assembled meanwhile')
      return void res.status(put === 'replaced' ? 204 : 201).end()
    }
    if (method === 'MOVE' && chunk === '.file') return assemble(req, res, next, deps, user.id, uploadId)
    if (method === 'DELETE' && chunk !== '.file') throw new BridgeError(405, 'METHOD_NOT_ALLOWED', 'Delete the whole upload folder instead')
    throw new BridgeError(405, 'METHOD_NOT_ALLOWED', `${method} is not supported here`)
  })
  return router
}

async function assemble(
  req: Request,
  res: Response,
  next: (err?: unknown) => void,
  deps: ChunkedUploadDeps,
  userId: string,
  uploadId: string,
): Promise<void> {
  const destination = req.headers.destination
  if (!destination) throw badRequest('MOVE needs a Destination header')
  const mapper = createDavUrlMapper({
    pathMap: deps.pathMap,
    userId,
    base: DAV_FILES_PREFIX + encodeURIComponent(userId),
    gatewayUrl: deps.gateway.url,
    clientHosts: [req.headers.host, req.host],
  })
  const target = mapper.clientUrlToGateway(String(destination))
  if (target.userPath === '/') throw forbidden('The root of your files cannot be replaced')

  // Claimed: a DELETE or a chunk racing this MOVE now finds no upload, and the chunks stay whole while sent.
  const upload = await deps.uploads.claim(userId, uploadId)
  if (!upload) throw notFound('No such upload')
  try {
    if (upload.chunks.length === 0) throw badRequest('The upload has no chunks')
    const total = upload.chunks.reduce((sum, c) => sum + c.size, 0)
    const declared = req.headers['oc-total-length']
    if (declared !== undefined && Number(declared) !== total) {
      throw badRequest(`OC-Total-Length says ${declared} bytes but the chunks hold ${total}`)
    }
    await deps.gateway.ensureFolder(deps.pathMap.rootOf(userId))
    const headers: OutgoingHttpHeaders = { 'content-length': String(total) }
    for (const name of PASSED_ON) {
      const value = req.headers[name]
      if (value !== undefined) headers[name] = value
    }
    // The upload is done once the gateway has the whole file; otherwise it is the client's again, to retry.
    res.once('close', () => {
      const done = res.writableFinished && res.statusCode < 300
      void (done ? upload.discard() : upload.release()).catch((err) =>
        deps.logger.warn({ err, uploadId }, 'tidying an assembled upload failed'),
      )
    })
    forward(req, res, next, { method: 'PUT', path: target.path, headers, mapper, deps, body: upload.stream() })
  } catch (err) {
    await upload.release()
    throw err
  }
}

interface MultistatusEntry {
  href: string
  collection?: boolean
  size?: number
  modifiedMs?: number
}

function sendMultistatus(res: Response, entries: MultistatusEntry[]): void {
  const responses = entries.map((e) => {
    const props = e.collection
      ? '<d:resourcetype><d:collection/></d:resourcetype>'
      : `<d:resourcetype/><d:getcontentlength>${e.size ?? 0}</d:getcontentlength>` +
        (e.modifiedMs !== undefined ? `<d:getlastmodified>${new Date(e.modifiedMs).toUTCString()}</d:getlastmodified>` : '')
    return `<d:response><d:href>${xmlEscape(e.href)}</d:href><d:propstat><d:prop>${props}</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>`
  })
  res
    .status(207)
    .type('application/xml; charset=utf-8')
    .send(`<?xml version="1.0" encoding="utf-8"?>\n<d:multistatus xmlns:d="DAV:">${responses.join('')}</d:multistatus>\n`)
}
