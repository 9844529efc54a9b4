import type { ErrorRequestHandler } from 'express'
import { isDiskFull } from '../shared/disk.ts'
import { HttpError, describeParserError } from '../shared/errors.ts'
import type { Logger } from '../shared/logger.ts'

/** Every failure the gateway reports; the envelope is `{ success: false, error }`. */
export class GatewayError extends HttpError {}

export const notFound = (what = 'File or folder') => new GatewayError(404, 'NOT_FOUND', `${what} not found`)
export const badRequest = (message: string) => new GatewayError(400, 'BAD_REQUEST', message)
/** A route of ours asked with a method it does not take; `allow` lists those it does. */
export const methodNotAllowed = (method: string, path: string, allow: string[]) =>
  new GatewayError(405, 'METHOD_NOT_ALLOWED', `${method} is not allowed on ${path}: use ${allow[0]}`, { Allow: allow.join(', ') })

/** The one place gateway errors become `{ success: false, error }` responses. */
export function gatewayErrorHandler(logger: Logger): ErrorRequestHandler {
  return (err, _req, res, _next) => {
    if (err instanceof GatewayError) {
      res.status(err.status).set(err.headers).json({ success: false, error: err.message })
      return
    }
    const parsed = describeParserError(err)
    if (parsed) {
      res.status(parsed.status).json({ success: false, error: parsed.message })
      return
    }
    if (isDiskFull(err)) {
      res.status(503).set('Retry-After', '60').json({ success: false, error: "The gateway's disk is full; try again once space is freed" })
      return
    }
    logger.error({ err }, 'unexpected gateway error')
    if (!res.headersSent) res.status(500).json({ success: false, error: 'Internal gateway error' })
  }
}
