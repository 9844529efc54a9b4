import type { RequestHandler } from 'express'
import type { IncomingHttpHeaders } from 'node:http'
import { currentUser } from './auth/caller.ts'
import { CsrfError, badRequest, forbidden, setSurface } from './errors.ts'

/** The app's own OCS routes answer bare `{ success, ... }` JSON, not the OCS envelope. */
export const appSurface: RequestHandler = (req, _res, next) => {
  setSurface(req, 'app')
  next()
}

/**
 * Nextcloud's CSRF rule for API calls: `OCS-APIRequest: true`. A browser
 * session has passed its requesttoken check already (see session-auth.ts).
 */
export function checkOcsApiRequest(headers: IncomingHttpHeaders): void {
  if (String(headers['ocs-apirequest'] ?? '').toLowerCase() !== 'true') throw new CsrfError()
}

export const requireOcsApiRequest: RequestHandler = (req, _res, next) => {
  checkOcsApiRequest(req.headers)
  next()
}

export const requireAdmin: RequestHandler = (_req, res, next) => {
  if (!currentUser(res).isAdmin) throw forbidden('Only administrators can change the gateway link')
  next()
}

/** A body, when there is one, must be JSON (an empty POST is fine). */
export const requireJsonBody: RequestHandler = (req, _res, next) => {
  const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined
  if (hasBody && !req.is('application/json')) throw badRequest('Content-Type must be application/json')
  next()
}
