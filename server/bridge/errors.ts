import type { ErrorRequestHandler } from 'express'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { isDiskFull } from '../shared/disk.ts'
import { loggedUrl } from '../shared/request-log.ts'
import { HttpError, describeParserError } from '../shared/errors.ts'
import { sendJson, sendText } from '../shared/json-response.ts'
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
export const gatewayBadResponse = (message = 'The gateway gave an unexpected answer') =>
  new BridgeError(502, 'GATEWAY_BAD_RESPONSE', message)
export const gatewayTimeout = () => new BridgeError(504, 'GATEWAY_TIMEOUT', 'The gateway did not answer in time')

/** Nextcloud's own answer to a request that fails its CSRF check; clients match its body exactly. */
export class CsrfError extends BridgeError {
  constructor() {
    super(412, 'CSRF_CHECK_FAILED', 'CSRF check failed')
  }
}

type WithSurface = IncomingMessage & { bridgeSurface?: Surface }

export function setSurface(req: IncomingMessage, surface: Surface): void {
  ;(req as WithSurface).bridgeSurface = surface
}

const surfaceOf = (req: IncomingMessage): Surface => (req as WithSurface).bridgeSurface ?? 'app'

const xmlEscape = (s: string) => s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`)

/** Sabre/Nextcloud's WebDAV error body, which WebDAV clients show to users. */
function davErrorBody(err: BridgeError): string {
  return (
    `<?xml version="1.0" encoding="utf-8"?>\n<d:error xmlns:d="DAV:" xmlns:s="http://sabredav.org/ns">` +
    `<s:exception>${xmlEscape(err.code)}</s:exception><s:message>${xmlEscape(err.message)}</s:message></d:error>\n`
  )
}

/**
 * The one place bridge errors become responses: `{ success: false, error }`,
 * Sabre XML or an OCS envelope. Plain node types, for the Express error
 * handler and the fast lane alike.
 */
export function sendBridgeError(logger: Logger, err: unknown, req: IncomingMessage, res: ServerResponse): void {
  let error: BridgeError
  if (err instanceof BridgeError) {
    error = err
  } else {
    const parsed = describeParserError(err)
    if (parsed) {
      error = new BridgeError(parsed.status, parsed.code, parsed.message)
    } else if (isDiskFull(err)) {
      // WebDAV clients know 507 (Sabre's InsufficientStorage); other routes get a plain "try again later".
      error =
        surfaceOf(req) === 'dav'
          ? new BridgeError(507, 'INSUFFICIENT_STORAGE', "The server's disk is full; nothing was stored. Try again once space is freed.", {
              'Retry-After': '60',
            })
          : new BridgeError(503, 'STORAGE_FULL', "The server's disk is full; try again once space is freed", { 'Retry-After': '60' })
      logger.warn({ url: loggedUrl(req), status: error.status }, 'disk full: request refused')
    } else if (clientHungUp(err, req)) {
      // Nothing to answer: the connection is gone. Not our error, so not logged as one.
      logger.info({ method: req.method, url: loggedUrl(req) }, 'client hung up before the request was read')
      return void res.destroy()
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
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value)
  if (error instanceof CsrfError) return sendJson(res, error.status, { message: 'CSRF check failed' })
  switch (surfaceOf(req)) {
    case 'dav':
      return sendText(res, error.status, 'application/xml; charset=utf-8', davErrorBody(error))
    case 'ocs':
      return renderOcs(req, res, { status: error.status, message: error.message, data: [] })
    default:
      return sendJson(res, error.status, { success: false, error: error.message })
  }
}

/** A body read that failed because the client went away (Node's 'aborted' reset), not because of us. */
function clientHungUp(err: unknown, req: IncomingMessage): boolean {
  const code = (err as { code?: unknown } | null)?.code
  return (code === 'ECONNRESET' || code === 'ECONNABORTED' || code === 'ERR_STREAM_PREMATURE_CLOSE') && !req.complete
}

export function bridgeErrorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => sendBridgeError(logger, err, req, res)
}
