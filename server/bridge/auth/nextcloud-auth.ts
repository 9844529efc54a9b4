import type { Logger } from '../../shared/logger.ts'
import { BridgeError, CsrfError, forbidden, tooManyAttempts, unauthorized } from '../errors.ts'
import type { NextcloudClient, NextcloudCredentials, NextcloudUser } from '../nextcloud/nextcloud-client.ts'
import type { User } from '../users.ts'
import type { Authenticate } from './caller.ts'
import { parseBasicAuth } from './basic-auth.ts'
import type { CredentialCache } from './credential-cache.ts'
import type { LoginThrottle } from './throttle.ts'

export interface NextcloudAuthOptions {
  client: NextcloudClient
  throttle: LoginThrottle
  /** Successes only, keyed by a keyed hash of the forwarded credentials (credential-cache.ts). */
  cache: CredentialCache<User>
  logger: Logger
}

// Nextcloud's own rule for user ids (letters, digits, space, _ . @ - '), minus what could move a gateway path.
const NEXTCLOUD_USER_ID = /^[A-Za-z0-9 _.@'-]{1,64}$/
const AUTHORIZATION = /^(Basic|Bearer)\s+\S+$/i

const sessionUnauthorized = (message: string) => new BridgeError(401, 'UNAUTHORIZED', message)

/** Who an attempt names, for the throttle: the login of Basic credentials, else the kind of credential. */
const loginOf = (creds: NextcloudCredentials): string => {
  if (creds.kind !== 'authorization') return creds.kind
  const basic = parseBasicAuth(creds.authorization)
  return basic ? basic.login : 'bearer'
}

const toUser = (u: NextcloudUser): User => ({ id: u.id, displayName: u.displayName, isAdmin: u.groups.includes('admin'), createdMs: 0 })

/**
 * Authenticates through the real Nextcloud: the caller's `Authorization`, or
 * its session `Cookie` with the `requesttoken`, is forwarded to
 * `GET /ocs/v2.php/cloud/user` and the user id Nextcloud returns is the
 * caller. Admin rights are Nextcloud's `admin` group in that same answer.
 * Throttled like the embedded logins; a Nextcloud that cannot answer is a
 * 503, never a 401.
 */
export function nextcloudAuth(opts: NextcloudAuthOptions): Authenticate {
  const log = opts.logger
  return async (req) => {
    const { address } = req
    const { authorization, cookie } = req.headers
    const requestToken = typeof req.headers.requesttoken === 'string' ? req.headers.requesttoken : undefined
    let creds: NextcloudCredentials
    let cacheKind: string
    let cacheSecret: string
    if (authorization !== undefined) {
      if (!AUTHORIZATION.test(authorization)) throw unauthorized()
      creds = { kind: 'authorization', authorization }
      cacheKind = 'authorization'
      cacheSecret = authorization
    } else if (cookie !== undefined && cookie !== '') {
      if (!requestToken) {
        log.warn({ address }, 'session cookie without requesttoken: refused')
        throw new CsrfError()
      }
      creds = { kind: 'session', cookie, requestToken }
      cacheKind = 'session'
      cacheSecret = `${cookie}\0${requestToken}`
    } else if (requestToken !== undefined) {
      log.warn({ address }, 'requesttoken without a session cookie: refused')
      throw sessionUnauthorized('A requesttoken is only valid with its Nextcloud session')
    } else {
      throw unauthorized()
    }

    const wait = await opts.throttle.retryAfter(address)
    if (wait > 0) throw tooManyAttempts(wait)
    const user = await opts.cache.getOrVerify(cacheKind, cacheSecret, async () => {
      const tried = await opts.throttle.attempt(address, loginOf(creds), async () => {
        const answer = await opts.client.currentUser(creds)
        if (answer === 'csrf') throw new CsrfError()
        if (answer === 'refused') return undefined
        if (!NEXTCLOUD_USER_ID.test(answer.id) || answer.id === '.' || answer.id === '..') {
          log.warn({ address }, 'Nextcloud user id unusable in gateway paths: refused')
          throw forbidden('Your Nextcloud user id cannot be used for gateway paths')
        }
        return toUser(answer)
      })
      if (!('value' in tried)) throw tooManyAttempts(tried.retryAfter)
      return tried.value
    })
    if (!user) {
      log.warn({ address, kind: creds.kind }, 'Nextcloud refused the credentials')
      throw creds.kind === 'authorization'
        ? unauthorized('Nextcloud did not accept these credentials')
        : sessionUnauthorized('Your Nextcloud session is not valid (expired or logged out); log in again')
    }
    return { user, nextcloud: creds }
  }
}
