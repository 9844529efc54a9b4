import { randomUUID } from 'node:crypto'
import type { ErrorRequestHandler, Response } from 'express'
import { isNetworkError } from '../network/errors.ts'
import { HttpError, describeParserError } from '../shared/errors.ts'
import type { Logger } from '../shared/logger.ts'

/**
 * Every failure the deal service reports. `code` is our machine-readable kind
 * (for logs and tests); clients see `{ error: { code: <request UUID>, message } }`
 * as the spec wants.
 */
export class ServiceError extends HttpError {}

export const badRequest = (message: string, code = 'BAD_REQUEST') => new ServiceError(400, code, message)
export const unauthorized = () => new ServiceError(401, 'UNAUTHORIZED', 'A valid X-API-KEY header is required')
export const forbidden = (plan: string) =>
  new ServiceError(403, 'PLAN_NOT_ELIGIBLE', `Your plan (${plan}) does not give access to this endpoint`)
export const notFound = () => new ServiceError(404, 'NOT_FOUND', 'No such endpoint')
// The spec's table has 500 for "cannot process the request at this time"; a node being down is that.
export const unavailable = (message = 'The network node is not reachable right now') =>
  new ServiceError(500, 'NETWORK_UNAVAILABLE', message)

/** The request's UUID (set first thing for every request); the error `code` clients quote to support. */
export function requestId(res: Response): string {
  return String(res.locals.requestId)
}

/** The one place errors become the service's `{ error: { code, message } }` envelope. */
export function serviceErrorHandler(logger: Logger): ErrorRequestHandler {
  return (err, _req, res, _next) => {
    const code = requestId(res)
    if (err instanceof ServiceError) {
      logger.info({ reqId: code, kind: err.code, status: err.status }, err.message)
      res
        .status(err.status)
        .set(err.headers)
        .json({ error: { code, message: err.message } })
      return
    }
    // The node down, slow, shedding load or talking nonsense; an error it answered (REJECTED_BY_CHAIN) is not an outage.
    if (isNetworkError(err, 'UNREACHABLE', 'TIMED_OUT', 'PROTOCOL_ERROR', 'BUSY')) {
      logger.warn({ reqId: code, err: err.message }, 'network node unavailable')
      res.status(500).json({ error: { code, message: 'The network node is not reachable right now; try again later' } })
      return
    }
    const parsed = describeParserError(err)
    if (parsed) {
      // The spec's status table has no 413/415: an oversized or undecodable body is a malformed request.
      logger.info({ reqId: code, kind: parsed.code }, parsed.message)
      res.status(400).json({ error: { code, message: parsed.message } })
      return
    }
    logger.error({ reqId: code, err }, 'unexpected deal service error')
    if (!res.headersSent) res.status(500).json({ error: { code, message: 'The service cannot process the request at this time' } })
  }
}

/** The envelope for what the HTTP layer answers before any route runs (408, 503): a fresh code, as a request would get. */
export const serviceErrorBody = (message: string) => ({
  type: 'application/json; charset=utf-8',
  text: JSON.stringify({ error: { code: randomUUID(), message } }),
})
