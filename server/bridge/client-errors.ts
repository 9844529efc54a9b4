import type { Duplex } from 'node:stream'
import type { Logger } from '../shared/logger.ts'

/**
 * `clientError` listener for the bridge's HTTP server: what Node refuses
 * before any route runs (headers over its 16 KiB limit → 431, malformed
 * requests → 400) is logged and answered in the app's envelope.
 */
export function clientErrorHandler(logger: Logger): (err: Error & { code?: string }, socket: Duplex) => void {
  return (err, socket) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy()
      return
    }
    const tooLarge = err.code === 'HPE_HEADER_OVERFLOW'
    logger.warn({ code: err.code, address: (socket as { remoteAddress?: string }).remoteAddress }, tooLarge ? 'request headers too large: refused' : 'malformed request: refused')
    const status = tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request'
    const body = JSON.stringify({ success: false, error: tooLarge ? 'Request headers are too large' : 'Malformed request' })
    socket.end(`HTTP/1.1 ${status}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
  }
}
