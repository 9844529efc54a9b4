import { timingSafeEqual } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import { CsrfError, unauthorized } from '../errors.ts'
import type { Session, SessionStore } from '../sessions.ts'
import type { UserStore } from '../users.ts'
import type { Authenticate } from './caller.ts'

type WithHeaders = { headers: IncomingHttpHeaders }

export const SESSION_COOKIE = 'gateway_session'

/** The value of one cookie from the `Cookie` header, or undefined. */
export function readCookie(req: WithHeaders, name: string): string | undefined {
  for (const part of String(req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=')
    if (eq === -1) continue
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
  }
  return undefined
}

/** The session a request came with, if its cookie names a live one. */
export async function sessionOf(req: WithHeaders, sessions: SessionStore): Promise<{ id: string; session: Session } | undefined> {
  const id = readCookie(req, SESSION_COOKIE)
  if (!id || id.length > 128) return undefined
  const session = await sessions.get(id)
  return session && { id, session }
}

export function requestTokenMatches(req: WithHeaders, session: Session): boolean {
  const given = Buffer.from(String(req.headers.requesttoken ?? ''))
  const expected = Buffer.from(session.requestToken)
  return given.length === expected.length && timingSafeEqual(given, expected)
}

export interface SessionAuthOptions {
  sessions: SessionStore
  users: UserStore
  /** Used whenever the request has an `Authorization` header or no live session. */
  basic: Authenticate
  /** GET/HEAD/OPTIONS pass without a request token (downloads through plain links, as in Nextcloud's WebDAV). */
  exemptSafeMethods?: boolean
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS'])

/**
 * Nextcloud's two ways in: HTTP basic auth (API and WebDAV clients) or the
 * browser session cookie, which counts only with the session's CSRF
 * `requesttoken` header (412 "CSRF check failed" otherwise).
 */
export function sessionOrBasicAuth(opts: SessionAuthOptions): Authenticate {
  return async (req) => {
    if (req.headers.authorization !== undefined) return opts.basic(req)
    const found = await sessionOf(req, opts.sessions)
    if (!found) return opts.basic(req)
    const user = await opts.users.get(found.session.userId)
    if (!user) throw unauthorized()
    if (!(opts.exemptSafeMethods && SAFE.has(req.method)) && !requestTokenMatches(req, found.session)) throw new CsrfError()
    return { user }
  }
}
