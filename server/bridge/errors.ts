import type { ErrorRequestHandler, Request } from 'express'
import { HttpError, describeParserError } from '../shared/errors.ts'
import type { Logger } from '../shared/logger.ts'
import { renderOcs } from './ocs.ts'

/** Every failure the bridge reports; one handler turns it into the envelope of the surface asked. */
export class BridgeError extends HttpError {}

/** Which envelope a request is answered in; set by the router that handles it. */
export type Surface = 'app' | 'dav' | 'ocs'

const BASIC_CHALLENGE = { 'WWW-Authenticate': 'Basic realm="Nextcloud", charset="UTF-8"' }

export const badRequest = (message: string) => new BridgeError(400, 'BAD_REQUEST', message)
export const unauthorized = (message = 'Authentication required') => new BridgeError(401, 'UNAUTHORIZED', message, BASIC_CHALLENGE)
export const forbidden = (message = 'Access denied') => new BridgeError(403, 'FORBIDDEN', message)
export const notFound = (message = 'No such file or folder for this user') => new BridgeError(404, 'NOT_FOUND', message)
export const tooManyAttempts = (retryAfterSeconds: number) =>
  new BridgeError(429, 'TOO_MANY_ATTEMPTS', 'Too many failed login attempts; try again later', { 'Retry-After': String(retryAfterSeconds) })
export const gatewayUnreachable = (message = 'The gateway cannot be reached') => new BridgeError(502, 'GATEWAY_UNREACHABLE', message)
export const gatewayBadResponse = (message = 'The gateway gave an unexpected answer') => new BridgeError(502, 'GATEWAY_BAD_RESPONSE', message)
export const gatewayTimeout = () => new BridgeError(504, 'GATEWAY_TIMEOUT', 'The gateway did not answer in time')

/** Nextcloud's own answer to a request that fails its CSRF check; clients match its body exactly. */
export class CsrfError extends BridgeError {
  constructor() {
    super(412, 'CSRF_CHECK_FAILED', 'CSRF check failed')
  }
}

export function setSurface(req: Request, surface: Surface): void {
  ;(req as Request & { bridgeSurface?: Surface }).bridgeSurface = surface
}

function surfaceOf(req: Request): Surface {
  return (req as Request & { bridgeSurface?: Surface }).bridgeSurface ?? 'app'
}

const xmlEscape = (s: string) => s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`)

/** Sabre/Nextcloud's WebDAV error body, which WebDAV clients show to users. */
function davErrorBody(err: BridgeError): string {
  return `<?xml version="1.0" encoding="utf-8"?>\n<d:error xmlns:d="DAV:" xmlns:s="http://sabredav.org/ns">` +
    `<s:exception>${xmlEscape(err.code)}</s:exception><s:message>${xmlEscape(err.message)}</s:message></d:error>\n`
}

/** The one place bridge errors become responses: `{ success: false, error }`, Sabre XML or an OCS envelope. */
export function bridgeErrorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    let error: BridgeError
    if (err instanceof BridgeError) {
      error = err
    } else {
      const parsed = describeParserError(err)
      if (parsed) {
        error = new BridgeError(parsed.status, parsed.code, parsed.message)
      } else {
        logger.error({ err }, 'unexpected bridge error')
        error = new BridgeError(500, 'INTERNAL', 'Internal error')
      }
    }
    if (res.headersSent) {
      // A proxied body already started: all we can do is cut the connection.
      res.destroy()
      return
    }
    res.status(error.status).set(error.headers)
    if (error instanceof CsrfError) {
      res.json({ message: 'CSRF check failed' })
      return
    }
    switch (surfaceOf(req)) {
      case 'dav':
        res.type('application/xml; charset=utf-8').send(davErrorBody(error))
        return
      case 'ocs':
        renderOcs(req, res, { status: error.status, message: error.message, data: [] })
        return
      default:
        res.json({ success: false, error: error.message })
    }
  }
}
