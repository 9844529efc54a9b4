import type { Duplex } from 'node:stream'
import { answerClientError } from '../shared/http.ts'
import { createLineLimit, leftOutField } from '../shared/line-limit.ts'
import type { Logger } from '../shared/logger.ts'

/**
 * `clientError` listener for the bridge's HTTP server: what Node refuses
 * before any route runs (headers over its 16 KiB limit → 431, malformed
 * requests → 400) is logged and answered in the app's envelope.
 */
export function clientErrorHandler(logger: Logger): (err: Error & { code?: string }, socket: Duplex) => void {
  const refusals = createLineLimit({ perWindow: 20 })
  return (err, socket) => {
    if (err.code !== 'ECONNRESET' && socket.writable && !socket.writableEnded) {
      const tooLarge = err.code === 'HPE_HEADER_OVERFLOW'
      // A flood of malformed requests is a few lines and a count, not a line each.
      refusals(tooLarge ? 'too-large' : 'malformed', (leftOut) =>
        logger.warn(
          { code: err.code, address: (socket as { remoteAddress?: string }).remoteAddress, ...leftOutField(leftOut) },
          tooLarge ? 'request headers too large: refused' : 'malformed request: refused',
        ),
      )
    }
    answerClientError(err, socket, (tooLarge) => ({
      type: 'application/json; charset=utf-8',
      text: JSON.stringify({ success: false, error: tooLarge ? 'Request headers are too large' : 'Malformed request' }),
    }))
  }
}
