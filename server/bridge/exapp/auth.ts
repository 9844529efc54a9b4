/**
 * AppAPI's authentication of the requests it sends an ExApp, checked the way
 * AppAPI checks the ExApp's own requests (nextcloud/app_api
 * lib/Service/AppAPIService.php, validateExAppRequestToNC): EX-APP-ID names
 * this app, AUTHORIZATION-APP-API is base64 of `userid:secret` with this app's
 * secret (the user id empty for calls not made for a user: /init, /enabled),
 * and AA-VERSION and EX-APP-VERSION are present (lib/Service/AppAPICommonService.php,
 * buildAppAPIAuthHeaders). The secret is compared in constant time.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import type { Authenticate } from '../auth/caller.ts'
import { BridgeError } from '../errors.ts'
import type { NextcloudCredentials } from '../nextcloud/nextcloud-client.ts'

export interface AppApiIdentity {
  appId: string
  secret: string
}

/** Who AppAPI says a request is for; `userId` is '' for AppAPI's own calls. */
export interface AppApiCall {
  userId: string
  appApiVersion: string
  exAppVersion: string
}

/** No Basic challenge: the caller is AppAPI, not a browser that could ask for a password. */
const refused = (message: string) => new BridgeError(401, 'UNAUTHORIZED', message)

const one = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name]
  return typeof value === 'string' && value !== '' ? value : undefined
}

/** Equal or not, in a time that depends on neither secret's content nor length. */
export function sameSecret(given: string, expected: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest()
  return timingSafeEqual(digest(given), digest(expected))
}

/** The checked call, or a 401 saying which part is missing or wrong (never the secret). */
export function checkAppApiHeaders(headers: IncomingHttpHeaders, identity: AppApiIdentity): AppApiCall {
  const appId = one(headers, 'ex-app-id')
  const authorization = one(headers, 'authorization-app-api')
  const appApiVersion = one(headers, 'aa-version')
  const exAppVersion = one(headers, 'ex-app-version')
  if (!appId || !authorization || !appApiVersion || !exAppVersion) {
    throw refused('AppAPI authentication required: AA-VERSION, EX-APP-ID, EX-APP-VERSION and AUTHORIZATION-APP-API headers')
  }
  if (appId !== identity.appId) throw refused(`This ExApp is ${identity.appId}, not ${appId.slice(0, 64)}`)
  const decoded = /^[A-Za-z0-9+/]+={0,2}$/.test(authorization) ? Buffer.from(authorization, 'base64').toString('utf8') : ''
  const colon = decoded.indexOf(':')
  if (colon < 0) throw refused('AUTHORIZATION-APP-API is not base64 of userid:secret')
  if (!sameSecret(decoded.slice(colon + 1), identity.secret)) throw refused('AUTHORIZATION-APP-API does not carry this ExApp’s secret')
  return { userId: decoded.slice(0, colon), appApiVersion, exAppVersion }
}

/** The headers this ExApp sends Nextcloud as a user ('' for none), as AppAPI sends them to an ExApp. */
export function appApiHeaders(identity: AppApiIdentity & { version: string }, userId: string, appApiVersion = '0'): Record<string, string> {
  return {
    'AA-VERSION': appApiVersion,
    'EX-APP-ID': identity.appId,
    'EX-APP-VERSION': identity.version,
    'AUTHORIZATION-APP-API': Buffer.from(`${userId}:${identity.secret}`, 'utf8').toString('base64'),
  }
}

/**
 * The app's OCS routes behind AppAPI's proxy: the caller is the user AppAPI
 * names; calls to Nextcloud on their behalf (the WebDAV check that a path is
 * theirs) carry AppAPI headers for that user, which AppAPI's DAV plugin
 * accepts (lib/DavPlugin.php). A request without a user is refused: the
 * routes are per user.
 */
export function appApiAuthenticate(identity: AppApiIdentity & { version: string }): Authenticate {
  return async (req) => {
    const call = checkAppApiHeaders(req.headers, identity)
    if (call.userId === '') throw refused('This route answers for a user; AppAPI named none')
    const nextcloud: NextcloudCredentials = { kind: 'headers', headers: appApiHeaders(identity, call.userId, call.appApiVersion) }
    // Admin rights are not carried by AppAPI's headers: the admin routes stay closed in this mode.
    return { user: { id: call.userId, displayName: call.userId, isAdmin: false, createdMs: 0 }, nextcloud }
  }
}
