import { createServer, type RequestListener, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface RunningServer {
  server: Server
  url: string
  port: number
  /** Stops accepting, lets in-flight requests finish (up to `graceMs`), then closes. */
  close(graceMs?: number): Promise<void>
}

/** Starts an HTTP server on host:port (port 0 picks a free one). */
export async function startServer(handler: RequestListener, port: number, host = '127.0.0.1'): Promise<RunningServer> {
  const server = createServer(handler)
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
