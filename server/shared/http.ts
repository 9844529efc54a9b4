import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'

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

export interface ServerOptions {
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

/**
 * Apache's lingering close. Closing a socket while the client's data sits
 * unread makes the kernel answer with a reset, and the client loses the
 * answer it was sent (a 401 challenge, a 413). So send FIN after the answer,
 * read and drop what still comes, and close once the client has stopped or
 * after `LINGER_MS`.
 */
function closeGently(socket: Socket): void {
  if (socket.destroyed) return
  socket.end()
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

/** Starts an HTTP server on host:port (port 0 picks a free one). */
export async function startServer(handler: RequestListener, port: number, host = '127.0.0.1', options: ServerOptions = {}): Promise<RunningServer> {
  const idleTimeoutMs = options.idleTimeoutMs ?? 30_000
  const server = createServer({
    // Large WebDAV uploads may take long: no limit on the whole request, only on idleness.
    requestTimeout: 0,
    headersTimeout: idleTimeoutMs,
    // How often Node checks `headersTimeout` (its default, 30 s, would double the limit).
    connectionsCheckingInterval: Math.min(1_000, idleTimeoutMs),
  }, (req, res) => {
    watchRequest(req, res, idleTimeoutMs)
    handler(req, res)
  })
  server.keepAliveTimeout = 5_000
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
