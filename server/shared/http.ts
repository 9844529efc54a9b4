import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import { capConnections, createConnectionBudget, type ConnectionBudget } from './connection-cap.ts'
import { freePortAvoiding, isAddressInUse } from './free-port.ts'
import { closeGently, isClosing, rawAnswer } from './lingering-close.ts'

export interface RunningServer {
  server: Server
  url: string
  port: number
  /** Stops accepting, lets in-flight requests finish (up to `graceMs`), then closes. */
  close(graceMs?: number): Promise<void>
}

/** A body up to this size that arrives after its answer is read and dropped, keeping the connection. */
const SMALL_BODY_BYTES = 64 * 1024

/**
 * Answers what Node refuses before any handler runs (a malformed request
 * line → 400, headers over 16 KiB → 431) and closes gently, so a client still
 * sending its body reads the answer instead of a reset.
 */
export function answerClientError(
  err: Error & { code?: string },
  socket: Duplex,
  body = (tooLarge: boolean) => ({
    type: 'text/plain; charset=utf-8',
    text: tooLarge ? 'Request headers are too large\n' : 'Malformed request\n',
  }),
): void {
  // Node's parser, once failed, reports each further chunk of the body as another error.
  if (isClosing(socket)) return
  if (err.code === 'ECONNRESET' || !socket.writable) return void socket.destroy()
  const tooLarge = err.code === 'HPE_HEADER_OVERFLOW'
  closeGently(socket, rawAnswer(tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request', body(tooLarge)))
}

export interface ServerOptions {
  /** Answers requests Node refuses before routing; `answerClientError` by default. */
  onClientError?: (err: Error & { code?: string }, socket: Duplex) => void
  /**
   * A connection that sends nothing for this long while its headers or its
   * body are due is closed; a slow but moving upload is never cut. Default 30 s.
   */
  idleTimeoutMs?: number
  /**
   * A body that is not an upload (anything but PUT) must arrive whole within
   * this long of its headers, or the request is answered 408 (nginx's
   * `client_body_timeout` read as a whole-body limit). Default 30 s.
   */
  bodyTimeoutMs?: number
  /**
   * An upload (PUT) gets `bodyTimeoutMs` to start, then must keep this many
   * bytes a second on average (Apache mod_reqtimeout's `body=20,MinRate=500`):
   * a slow but real link is never cut, a trickle is. Default 500.
   */
  uploadMinBytesPerSecond?: number
  /** The process's connection budget, shared by its servers; one of its own (defaults) when absent. */
  connections?: ConnectionBudget
  /** Addresses the per-address connection cap leaves alone (a trusted reverse proxy). */
  unlimitedAddress?: (address: string) => boolean
  /** The part's error envelope, for what this layer answers itself (408, 503). `{ success: false, error }` by default. */
  errorBody?: (message: string) => { type: string; text: string }
  /** Ports that port 0 must not pick (those other parts are configured on); a given port is taken as it is. */
  avoidPorts?: ReadonlySet<number>
}

const jsonErrorBody = (message: string) => ({
  type: 'application/json; charset=utf-8',
  text: JSON.stringify({ success: false, error: message }),
})

interface Deadlines {
  idleTimeoutMs: number
  bodyTimeoutMs: number
  uploadMinBytesPerSecond: number
  errorBody: (message: string) => { type: string; text: string }
}

/** True when the answer goes out while a body worth waiting for is still on its way. */
function bodyStillComing(req: IncomingMessage): boolean {
  if (req.complete) return false
  if (req.headers['transfer-encoding'] !== undefined) return true
  return Number(req.headers['content-length'] ?? 0) > SMALL_BODY_BYTES
}

/**
 * Per request: the idle timeout while its body is due (none while the
 * handler works: the answer may take long), and `Connection: close` plus a
 * lingering close when the answer goes out before a large body was read.
 */
function watchRequest(req: IncomingMessage, res: ServerResponse, d: Deadlines): void {
  // Captured now: Node nulls `req.socket` when a body reader fails half-way.
  const socket = req.socket
  socket.setTimeout(d.idleTimeoutMs)
  let deadline: NodeJS.Timeout | undefined
  const bodyDone = () => {
    socket.setTimeout(0)
    clearTimeout(deadline)
  }
  if (req.complete) bodyDone()
  else {
    req.once('end', bodyDone)
    req.once('close', bodyDone)
    const started = Date.now()
    const readAtStart = socket.bytesRead
    const upload = req.method === 'PUT'
    // When the body is late: now for a whole-body limit; for an upload, once its bytes stop covering the time taken.
    const check = () => {
      if (req.complete || socket.destroyed) return
      const allowedMs = d.bodyTimeoutMs + (upload ? ((socket.bytesRead - readAtStart) / d.uploadMinBytesPerSecond) * 1000 : 0)
      const left = started + allowedMs - Date.now()
      if (left > 0) deadline = setTimeout(check, Math.max(left, 1_000)).unref()
      else answerLateBody(socket, res, d, upload)
    }
    deadline = setTimeout(check, d.bodyTimeoutMs).unref()
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

/**
 * 408 for a body too slow to wait for, written straight to the socket, which
 * then closes: the handler, still waiting for the body, sees the request
 * aborted, and what it answers then goes nowhere.
 */
function answerLateBody(socket: Socket, res: ServerResponse, d: Deadlines, upload: boolean): void {
  if (res.headersSent) return void socket.destroy()
  // For the request log: this is how the request ended.
  res.statusCode = 408
  const message = upload ? 'The upload is too slow; the connection is closed' : 'The request body took too long; the connection is closed'
  closeGently(socket, rawAnswer('408 Request Timeout', d.errorBody(message)), 1_000)
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

function hostCount(req: IncomingMessage): number {
  let count = 0
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i].toLowerCase() === 'host') count++
  return count
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
}

/** Listens on `port`, or for port 0 on a free one outside `avoid` (asked again should another process take it first). */
async function listenAvoiding(server: Server, port: number, host: string, avoid: ReadonlySet<number> | undefined): Promise<void> {
  if (port !== 0 || !avoid?.size) return listen(server, port, host)
  for (let tries = 1; ; tries++) {
    try {
      return await listen(server, await freePortAvoiding(host, avoid), host)
    } catch (err) {
      if (!isAddressInUse(err) || tries >= 5) throw err
    }
  }
}

/** Starts an HTTP server on host:port (port 0 picks a free one). */
export async function startServer(
  handler: RequestListener,
  port: number,
  host = '127.0.0.1',
  options: ServerOptions = {},
): Promise<RunningServer> {
  const idleTimeoutMs = options.idleTimeoutMs ?? 30_000
  const errorBody = options.errorBody ?? jsonErrorBody
  const deadlines: Deadlines = {
    idleTimeoutMs,
    bodyTimeoutMs: options.bodyTimeoutMs ?? 30_000,
    uploadMinBytesPerSecond: options.uploadMinBytesPerSecond ?? 500,
    errorBody,
  }
  const inOrder = createPipelineOrder()
  const server = createServer(
    {
      // Large WebDAV uploads may take long: Node's whole-request limit would cut them; watchRequest sets the body's deadlines.
      requestTimeout: 0,
      headersTimeout: idleTimeoutMs,
      // How often Node checks `headersTimeout` (its default, 30 s, would double the limit).
      connectionsCheckingInterval: Math.min(1_000, idleTimeoutMs),
    },
    (req, res) => {
      // RFC 9112 §3.2: a request with more than one Host is answered 400 (Node keeps the first and drops the rest).
      if (hostCount(req) > 1) {
        const body = errorBody('A request may name one Host')
        res.shouldKeepAlive = false
        return void res.writeHead(400, { 'content-type': body.type, 'content-length': Buffer.byteLength(body.text) }).end(body.text)
      }
      // The idle limit starts with the request's turn: a body waiting behind another request is not idle.
      inOrder(req, res, () => {
        watchRequest(req, res, deadlines)
        handler(req, res)
      })
    },
  )
  server.keepAliveTimeout = 5_000
  // A connection that sends nothing at all is idle too (headersTimeout only runs once a request has begun).
  server.timeout = idleTimeoutMs
  server.on('clientError', options.onClientError ?? answerClientError)
  capConnections(server, options.connections ?? createConnectionBudget(), { exempt: options.unlimitedAddress, body: errorBody })
  await listenAvoiding(server, port, host, options.avoidPorts)
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
