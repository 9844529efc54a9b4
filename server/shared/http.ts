import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import type { Duplex } from 'node:stream'

export interface RunningServer {
  server: Server
  url: string
  port: number
  /** Stops accepting, lets in-flight requests finish (up to `graceMs`), then closes. */
  close(graceMs?: number): Promise<void>
}

/** How long a closing connection goes on reading what the client still sends before it is cut. */
const LINGER_MS = 2_000

/** A body up to this size that arrives after its answer is read and dropped, keeping the connection. */
const SMALL_BODY_BYTES = 64 * 1024

/**
 * Answers what Node refuses before any handler runs (a malformed request
 * line → 400, headers over 16 KiB → 431) and closes gently, so a client still
 * sending its body reads the answer instead of a reset.
 */
export function answerClientError(err: Error & { code?: string }, socket: Duplex, body = (tooLarge: boolean) => ({ type: 'text/plain; charset=utf-8', text: tooLarge ? 'Request headers are too large\n' : 'Malformed request\n' })): void {
  // Node's parser, once failed, reports each further chunk of the body as another error.
  if (closing.has(socket)) return
  if (err.code === 'ECONNRESET' || !socket.writable) return void socket.destroy()
  const tooLarge = err.code === 'HPE_HEADER_OVERFLOW'
  const status = tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request'
  const { type, text } = body(tooLarge)
  closeGently(socket, `HTTP/1.1 ${status}\r\nContent-Type: ${type}\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`)
}

export interface ServerOptions {
  /** Answers requests Node refuses before routing; `answerClientError` by default. */
  onClientError?: (err: Error & { code?: string }, socket: Duplex) => void
  /**
   * A connection that sends nothing for this long while its headers or its
   * body are due is closed; a slow but moving upload is never cut. Default 30 s.
   */
  idleTimeoutMs?: number
}

/** True when the answer goes out while a body worth waiting for is still on its way. */
function bodyStillComing(req: IncomingMessage): boolean {
  if (req.complete) return false
  if (req.headers['transfer-encoding'] !== undefined) return true
  return Number(req.headers['content-length'] ?? 0) > SMALL_BODY_BYTES
}

/** Sockets in their lingering close: what they still send is dropped, whatever the parser makes of it. */
const closing = new WeakSet<Socket | Duplex>()

/**
 * Apache's lingering close. Closing a socket while the client's data sits
 * unread makes the kernel answer with a reset, and the client loses the
 * answer it was sent (a 401 challenge, a 413). So send FIN after the answer,
 * read and drop what still comes, and close once the client has stopped or
 * after `LINGER_MS`.
 */
function closeGently(socket: Socket | Duplex, lastWords?: string): void {
  if (socket.destroyed || closing.has(socket)) return
  closing.add(socket)
  if (lastWords === undefined) socket.end()
  else socket.end(lastWords)
  socket.resume()
  const cut = setTimeout(() => socket.destroy(), LINGER_MS).unref()
  socket.once('close', () => clearTimeout(cut))
  socket.once('end', () => socket.destroy())
}

/**
 * Per request: the idle timeout while its body is due (none while the
 * handler works: the answer may take long), and `Connection: close` plus a
 * lingering close when the answer goes out before a large body was read.
 */
function watchRequest(req: IncomingMessage, res: ServerResponse, idleTimeoutMs: number): void {
  // Captured now: Node nulls `req.socket` when a body reader fails half-way.
  const socket = req.socket
  socket.setTimeout(idleTimeoutMs)
  const bodyDone = () => socket.setTimeout(0)
  if (req.complete) bodyDone()
  else {
    req.once('end', bodyDone)
    req.once('close', bodyDone)
  }
  const writeHead = res.writeHead
  res.writeHead = function (this: ServerResponse, ...args: Parameters<ServerResponse['writeHead']>) {
    if (bodyStillComing(req)) {
      res.shouldKeepAlive = false
      // Node closes a `Connection: close` socket with destroySoon(): make that a lingering close.
      socket.destroySoon = () => closeGently(socket)
    }
    return writeHead.apply(this, args)
  } as ServerResponse['writeHead']
}

/** RFC 9110 §9.2.1: the methods that change nothing, which pipelined requests may run side by side. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PROPFIND', 'REPORT', 'SEARCH'])

interface Connection {
  running: number
  unsafeRunning: boolean
  waiting: { safe: boolean; run: () => void }[]
}

/**
 * Node hands every pipelined request to the handler as soon as it is parsed,
 * so a PUT and the GET behind it on one connection ran at once and the GET
 * missed the PUT. RFC 9112 §9.3.2 lets only safe methods run in parallel:
 * a request waits while an unsafe one before it runs, and an unsafe one waits
 * for everything before it.
 */
function createPipelineOrder(): (req: IncomingMessage, res: ServerResponse, run: () => void) => void {
  const connections = new WeakMap<Socket, Connection>()
  const canStart = (c: Connection, safe: boolean) => c.running === 0 || (safe && !c.unsafeRunning)
  const drain = (c: Connection) => {
    while (c.waiting.length > 0 && canStart(c, c.waiting[0].safe)) c.waiting.shift()!.run()
  }
  return (req, res, run) => {
    const socket = req.socket
    let c = connections.get(socket)
    if (!c) connections.set(socket, (c = { running: 0, unsafeRunning: false, waiting: [] }))
    const conn = c
    const safe = SAFE_METHODS.has(req.method ?? '')
    const start = () => {
      // The client left while this request waited: nothing to answer.
      if (socket.destroyed) return
      conn.running++
      if (!safe) conn.unsafeRunning = true
      res.once('close', () => {
        conn.running--
        if (!safe) conn.unsafeRunning = false
        drain(conn)
      })
      run()
    }
    if (conn.waiting.length === 0 && canStart(conn, safe)) start()
    else conn.waiting.push({ safe, run: start })
  }
}

/** Starts an HTTP server on host:port (port 0 picks a free one). */
export async function startServer(handler: RequestListener, port: number, host = '127.0.0.1', options: ServerOptions = {}): Promise<RunningServer> {
  const idleTimeoutMs = options.idleTimeoutMs ?? 30_000
  const inOrder = createPipelineOrder()
  const server = createServer({
    // Large WebDAV uploads may take long: no limit on the whole request, only on idleness.
    requestTimeout: 0,
    headersTimeout: idleTimeoutMs,
    // How often Node checks `headersTimeout` (its default, 30 s, would double the limit).
    connectionsCheckingInterval: Math.min(1_000, idleTimeoutMs),
  }, (req, res) => {
    // The idle limit starts with the request's turn: a body waiting behind another request is not idle.
    inOrder(req, res, () => {
      watchRequest(req, res, idleTimeoutMs)
      handler(req, res)
    })
  })
  server.keepAliveTimeout = 5_000
  server.on('clientError', options.onClientError ?? answerClientError)
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const actual = (server.address() as AddressInfo).port
  const shownHost = host.includes(':') ? `[${host}]` : host
  return {
    server,
    port: actual,
    url: `http://${shownHost}:${actual}`,
    close: (graceMs = 10_000) =>
      new Promise<void>((resolve) => {
        const force = setTimeout(() => server.closeAllConnections(), graceMs)
        force.unref()
        server.close(() => {
          clearTimeout(force)
          resolve()
        })
        server.closeIdleConnections()
      }),
  }
}
