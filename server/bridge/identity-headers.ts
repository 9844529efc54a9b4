import type { RequestHandler } from 'express'
import type { IncomingHttpHeaders } from 'node:http'
import type { Logger } from '../shared/logger.ts'
import { BridgeError } from './errors.ts'

/**
 * Headers some proxies and SSO front ends use to name the user. The bridge
 * never takes a user from a header, so a request carrying one is someone
 * trying to be another user: refused, not silently ignored.
 */
export const IDENTITY_HEADERS = [
  'x-forwarded-user',
  'x-remote-user',
  'remote-user',
  'x-auth-user',
  'x-user',
  'x-authenticated-user',
  'x-forwarded-preferred-username',
  'x-forwarded-email',
  'oc-user',
  'x-oc-user',
  'x-nextcloud-user',
  'php-auth-user',
  'php-auth-pw',
  'auth-user',
]

/** Throws 400 when a request names its user in a header. */
export function checkIdentityHeaders(headers: IncomingHttpHeaders, address: string | undefined, logger: Logger): void {
  const found = IDENTITY_HEADERS.find((h) => headers[h] !== undefined)
  if (!found) return
  // The header's name, never its value.
  logger.warn({ header: found, address }, 'request with an identity header refused')
  throw new BridgeError(400, 'IDENTITY_HEADER_REFUSED', `The ${found} header is not accepted: the user comes from the login only`)
}

export function refuseIdentityHeaders(logger: Logger): RequestHandler {
  return (req, _res, next) => {
    checkIdentityHeaders(req.headers, req.ip, logger)
    next()
  }
}
