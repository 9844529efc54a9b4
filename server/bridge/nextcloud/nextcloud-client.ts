import axios, { type AxiosResponse } from 'axios'
import { createClient as createWebDavClient } from 'webdav'
import { BridgeError } from '../errors.ts'

/** What the bridge forwards to Nextcloud on the caller's behalf: never stored, never logged. */
export type NextcloudCredentials =
  | { kind: 'authorization'; authorization: string }
  | { kind: 'session'; cookie: string; requestToken: string }
  /** FILESYNC=appapi: AppAPI's headers for the user (server/bridge/exapp/auth.ts). */
  | { kind: 'headers'; headers: Record<string, string> }

/** The caller as `GET /ocs/v2.php/cloud/user` describes them (provisioning API, `data.id`, `data.groups`). */
export interface NextcloudUser {
  id: string
  displayName: string
  groups: string[]
}

/** Nextcloud's verdict on the credentials; anything else it can throw is a 503 BridgeError. */
export type Refusal = 'refused' | 'csrf'

export interface NextcloudClient {
  readonly url: string
  currentUser(creds: NextcloudCredentials): Promise<NextcloudUser | Refusal>
  /** Depth 0 PROPFIND of the user's path in Nextcloud's own WebDAV tree, with the caller's credentials. */
  exists(creds: NextcloudCredentials, userId: string, userPath: string): Promise<boolean | Refusal>
}

export interface NextcloudClientOptions {
  url: string
  timeoutMs: number
}

export const nextcloudMaintenance = () =>
  new BridgeError(503, 'NEXTCLOUD_MAINTENANCE', 'Nextcloud is in maintenance mode; try again later', { 'Retry-After': '60' })
export const nextcloudUnavailable = (message = 'Nextcloud cannot be reached to check your login; try again later') =>
  new BridgeError(503, 'NEXTCLOUD_UNAVAILABLE', message)
export const nextcloudBadResponse = (message: string) => new BridgeError(503, 'NEXTCLOUD_BAD_RESPONSE', message)

const MAX_ANSWER_BYTES = 1024 * 1024
const PROPFIND_BODY = '<?xml version="1.0" encoding="utf-8"?><d:propfind xmlns:d="DAV:"><d:prop><d:resourcetype/></d:prop></d:propfind>'

const credentialHeaders = (creds: NextcloudCredentials): Record<string, string> =>
  creds.kind === 'authorization'
    ? { authorization: creds.authorization }
    : creds.kind === 'headers'
      ? creds.headers
      : { cookie: creds.cookie, requesttoken: creds.requestToken }

/**
 * Asks the real Nextcloud who a caller is and whether a file is in their
 * tree, forwarding only the caller's own credentials. Maintenance mode,
 * 5xx, timeouts and odd answers become 503s: Nextcloud being unwell is
 * never reported as wrong credentials.
 */
export function createNextcloudClient(opts: NextcloudClientOptions): NextcloudClient {
  const base = opts.url.replace(/\/+$/, '')
  const http = axios.create({
    baseURL: base,
    timeout: opts.timeoutMs,
    maxRedirects: 0,
    maxContentLength: MAX_ANSWER_BYTES,
    responseType: 'text',
    // Bodies are parsed here, with a clear error, not by axios.
    transformResponse: (data: unknown) => data,
    validateStatus: () => true,
    // The bridge talks to NEXTCLOUD_URL directly, whatever HTTP_PROXY says.
    proxy: false,
  })

  const tooSlow = () => nextcloudUnavailable(`Nextcloud did not answer within ${opts.timeoutMs} ms; try again later`)
  const send = async (config: Parameters<typeof http.request>[0]): Promise<AxiosResponse<string>> => {
    try {
      return await http.request<string>(config)
    } catch (err) {
      const code = (err as { code?: string }).code
      if (code === 'ECONNABORTED' || code === 'ETIMEDOUT') throw tooSlow()
      throw nextcloudUnavailable()
    }
  }
  // Shared by both calls: what means "Nextcloud cannot answer now" (`redirectedTo`: where an answer sent us instead).
  const checkHealth = (answer: { status: number; maintenance: boolean; redirectedTo?: string }) => {
    if (answer.maintenance || answer.status === 503) throw nextcloudMaintenance()
    if (answer.status >= 500) throw nextcloudUnavailable(`Nextcloud answered ${answer.status}; try again later`)
    if (answer.redirectedTo !== undefined) throw nextcloudBadResponse(`Nextcloud redirects to ${answer.redirectedTo}: check NEXTCLOUD_URL`)
  }
  const axiosHealth = (res: AxiosResponse<string>) =>
    checkHealth({
      status: res.status,
      maintenance: res.headers['x-nextcloud-maintenance-mode'] === '1',
      redirectedTo: res.status >= 300 && res.status < 400 ? String(res.headers.location ?? 'another address') : undefined,
    })
  const refusal = (status: number): Refusal | undefined =>
    status === 412 ? 'csrf' : status === 401 || status === 403 ? 'refused' : undefined

  return {
    url: base,
    async currentUser(creds) {
      const res = await send({
        method: 'GET',
        url: '/ocs/v2.php/cloud/user',
        params: { format: 'json' },
        headers: { ...credentialHeaders(creds), 'OCS-APIRequest': 'true', accept: 'application/json' },
      })
      axiosHealth(res)
      const refused = refusal(res.status)
      if (refused) return refused
      if (res.status !== 200) throw nextcloudBadResponse(`Nextcloud answered ${res.status} to cloud/user`)
      return parseCurrentUser(res.data)
    },
    async exists(creds, userId, userPath) {
      // Nextcloud's WebDAV as its own clients speak it (the `webdav` library), in the caller's name.
      const dav = createWebDavClient(`${base}/remote.php/dav/files/${encodeURIComponent(userId)}`, { headers: credentialHeaders(creds) })
      let res: Response
      try {
        res = (await dav.customRequest(userPath, {
          method: 'PROPFIND',
          headers: { depth: '0', 'content-type': 'application/xml; charset=utf-8' },
          data: PROPFIND_BODY,
          signal: AbortSignal.timeout(opts.timeoutMs),
        })) as Response
      } catch (err) {
        // The library throws on 4xx and 5xx with the response attached; anything else never reached an answer.
        const answered = (err as { response?: Response }).response
        if (!answered) {
          // Only our deadline aborts the request (TimeoutError under fetch, AbortError under node-fetch).
          const name = (err as { name?: string }).name
          throw name === 'TimeoutError' || name === 'AbortError' ? tooSlow() : nextcloudUnavailable()
        }
        res = answered
      }
      // Only the status counts: the body is dropped unread (a web stream, or a Node one under the library's node-fetch).
      const body = res.body as { cancel?: () => Promise<void>; destroy?: () => void } | null
      if (body?.cancel) await body.cancel().catch(() => undefined)
      else body?.destroy?.()
      // fetch follows redirects: a PROPFIND that ended elsewhere (a login page) means NEXTCLOUD_URL is not Nextcloud's own address.
      checkHealth({
        status: res.status,
        maintenance: res.headers.get('x-nextcloud-maintenance-mode') === '1',
        redirectedTo: res.redirected ? new URL(res.url).origin : undefined,
      })
      const refused = refusal(res.status)
      if (refused) return refused
      if (res.status === 207) return true
      if (res.status === 404) return false
      throw nextcloudBadResponse(`Nextcloud answered ${res.status} to a WebDAV PROPFIND`)
    },
  }
}

/** `{ ocs: { meta, data: { id, display-name, groups } } }` → the user; anything else is a bad answer. */
export function parseCurrentUser(body: string): NextcloudUser {
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    throw nextcloudBadResponse('Nextcloud answered cloud/user with something that is not JSON')
  }
  const data = (parsed as { ocs?: { data?: Record<string, unknown> } })?.ocs?.data
  if (!data || typeof data.id !== 'string' || data.id === '') throw nextcloudBadResponse('Nextcloud answered cloud/user without a user id')
  const display = data['display-name'] ?? data.displayname
  const groups = Array.isArray(data.groups) ? data.groups.filter((g): g is string => typeof g === 'string') : []
  return { id: data.id, displayName: typeof display === 'string' && display !== '' ? display : data.id, groups }
}
