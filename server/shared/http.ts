import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface RunningServer {
  server: Server
  url: string
  port: number
  /** Stops accepting, lets in-flight requests finish (up to `graceMs`), then closes. */
  close(graceMs?: number): Promise<void>
}

/** How long Node may go on reading an unread body after the answer before the connection is cut. */
const LINGER_MS = 2_000

/**
 * After an answer that went out before the request's body was read (a
 * refused login, a body over its limit), Node reads and discards the rest of
 * the body, for as long as the client sends it. A body that ends soon keeps
 * the connection alive; one still arriving after `LINGER_MS` loses it.
 */
function closeIfBodyUnread(this: ServerResponse & { req: IncomingMessage }): void {
  const req = this.req
  if (req.complete) return
  const cut = setTimeout(() => req.socket.destroy(), LINGER_MS).unref()
  req.once('end', () => clearTimeout(cut))
}

/** Starts an HTTP server on host:port (port 0 picks a free one). */
export async function startServer(handler: RequestListener, port: number, host = '127.0.0.1'): Promise<RunningServer> {
  const server = createServer((req, res) => {
    res.once('finish', closeIfBodyUnread)
    handler(req, res)
  })
  // Large WebDAV uploads may take long; the idle socket timeout still applies.
  server.requestTimeout = 0
  server.headersTimeout = 60_000
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
