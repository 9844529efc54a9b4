import type { User, UserStore } from '../users.ts'
import type { Authenticate } from './caller.ts'
import type { LoginThrottle } from './throttle.ts'
import type { CredentialCache } from './credential-cache.ts'
import { tooManyAttempts, unauthorized } from '../errors.ts'

export interface BasicAuthOptions {
  users: UserStore
  throttle: LoginThrottle
  cache: CredentialCache<User>
}

export interface Credentials {
  login: string
  secret: string
}

/** Reads `Authorization: Basic base64(login:secret)`; undefined when absent or malformed. */
export function parseBasicAuth(header: string | undefined): Credentials | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header ?? '')
  if (!match) return undefined
  const decoded = Buffer.from(match[1], 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  if (colon <= 0) return undefined
  return { login: decoded.slice(0, colon), secret: decoded.slice(colon + 1) }
}

/**
 * Basic auth against the embedded users (password or app password).
 * Order: no credentials → 401; too many recent failures from the address →
 * 429 before any verification (fewer: a growing delay); wrong credentials → 401 and a recorded failure
 * (throttle.ts). Credentials verified in the last minute pass without a new attempt.
 * With `optional`, a request without credentials passes anonymously (Nextcloud's public pages).
 */
export function basicAuth(opts: BasicAuthOptions & { optional?: boolean }): Authenticate {
  return async (req) => {
    const header = req.headers.authorization
    const creds = parseBasicAuth(header)
    if (!creds) {
      if (opts.optional && header === undefined) return undefined
      throw unauthorized()
    }
    const wait = await opts.throttle.retryAfter(req.address)
    if (wait > 0) throw tooManyAttempts(wait)
    // Only a login not verified recently is an attempt; the same one sent many times at once is one attempt.
    const user = await opts.cache.getOrVerify(creds.login, creds.secret, async () => {
      const tried = await opts.throttle.attempt(req.address, creds.login, () => opts.users.verify(creds.login, creds.secret))
      if (!('value' in tried)) throw tooManyAttempts(tried.retryAfter)
      return tried.value
    })
    if (!user) throw unauthorized('Wrong user name or password')
    return { user }
  }
}
