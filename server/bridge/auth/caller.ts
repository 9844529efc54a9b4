import type { Request, RequestHandler, Response } from 'express'
import type { IncomingHttpHeaders } from 'node:http'
import { unauthorized } from '../errors.ts'
import type { NextcloudCredentials } from '../nextcloud/nextcloud-client.ts'
import type { User } from '../users.ts'

/**
 * What authentication looks at. No framework types: the metadata route is
 * served outside Express (fast-lane.ts) with the same authenticators.
 */
export interface AuthRequest {
  method: string
  headers: IncomingHttpHeaders
  /** The client's address, after the trusted proxies (`TRUST_PROXY`). */
  address: string
}

/** Who made a request. */
export interface Caller {
  user: User
  /** FILESYNC=nextcloud: the credentials forwarded, for calls made on the caller's behalf. */
  nextcloud?: NextcloudCredentials
}

/**
 * Resolves the caller or throws 401/412/429 (503 when Nextcloud cannot
 * answer); `undefined` only where anonymous callers are allowed.
 */
export type Authenticate = (req: AuthRequest) => Promise<Caller | undefined>

/** An authenticator as Express middleware: the caller lands in `res.locals.caller`. */
export function authMiddleware(authenticate: Authenticate): RequestHandler {
  return async (req: Request, res: Response, next) => {
    const caller = await authenticate({ method: req.method, headers: req.headers, address: req.ip ?? 'unknown' })
    if (caller) res.locals.caller = caller
    next()
  }
}

/** The user a request was authenticated as; only valid after an auth middleware ran. */
export function currentUser(res: Response): User {
  const caller = res.locals.caller as Caller | undefined
  if (!caller) throw unauthorized()
  return caller.user
}

export const hasUser = (res: Response) => res.locals.caller !== undefined
