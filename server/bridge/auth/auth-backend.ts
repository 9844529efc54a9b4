import type { RequestHandler } from 'express'
import type { Logger } from '../../shared/logger.ts'
import type { NextcloudClient } from '../nextcloud/nextcloud-client.ts'
import type { SessionStore } from '../sessions.ts'
import type { User, UserStore } from '../users.ts'
import { basicAuth } from './basic-auth.ts'
import { authMiddleware, type Authenticate } from './caller.ts'
import { createCredentialCache } from './credential-cache.ts'
import { nextcloudAuth } from './nextcloud-auth.ts'
import { sessionOrBasicAuth } from './session-auth.ts'
import type { LoginThrottle } from './throttle.ts'

/**
 * Who the callers of the app's OCS routes are, chosen once at start by
 * FILESYNC. Either adapter resolves the caller (admin rights in
 * `user.isAdmin`) or throws 401/412/429 (and 503 for Nextcloud).
 */
export interface AuthBackend {
  readonly kind: 'embedded' | 'nextcloud'
  /** For the OCS routes (metadata, config, admin settings). */
  authenticate: Authenticate
  /** `authenticate` as Express middleware: the caller lands in `res.locals.caller`. */
  auth: RequestHandler
}

export interface EmbeddedAuthBackend extends AuthBackend {
  readonly kind: 'embedded'
  /** The WebDAV files area: like `auth`, but GET/HEAD/OPTIONS with a session need no requesttoken. */
  davAuth: RequestHandler
  /** Lets anonymous requests through (Nextcloud's public pages). */
  optionalAuth: RequestHandler
}

/** Embedded users: basic auth (password or app password) or the preview page's session. */
export function embeddedAuthBackend(deps: { users: UserStore; sessions: SessionStore; throttle: LoginThrottle }): EmbeddedAuthBackend {
  const authOptions = { users: deps.users, throttle: deps.throttle, cache: createCredentialCache<User>() }
  const basic = basicAuth(authOptions)
  const authenticate = sessionOrBasicAuth({ sessions: deps.sessions, users: deps.users, basic })
  return {
    kind: 'embedded',
    authenticate,
    auth: authMiddleware(authenticate),
    davAuth: authMiddleware(sessionOrBasicAuth({ sessions: deps.sessions, users: deps.users, basic, exemptSafeMethods: true })),
    optionalAuth: authMiddleware(basicAuth({ ...authOptions, optional: true })),
  }
}

export interface NextcloudAuthBackendOptions {
  client: NextcloudClient
  throttle: LoginThrottle
  logger: Logger
  /** How long a login Nextcloud accepted is reused without asking again (default 30 s; 0 disables). */
  cacheTtlMs?: number
}

/** A real Nextcloud: every caller is checked through its `cloud/user` API. */
export function nextcloudAuthBackend(opts: NextcloudAuthBackendOptions): AuthBackend {
  const cache = createCredentialCache<User>({ ttlMs: opts.cacheTtlMs ?? 30_000 })
  const authenticate = nextcloudAuth({ client: opts.client, throttle: opts.throttle, cache, logger: opts.logger })
  return { kind: 'nextcloud', authenticate, auth: authMiddleware(authenticate) }
}
