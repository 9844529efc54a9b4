/**
 * The calls this ExApp makes to AppAPI's OCS API, each with AppAPI's headers
 * and no user (nextcloud/app_api appinfo/routes.php, 'ocs'; the OCS prefix is
 * /ocs/v1.php/apps/app_api):
 * - PUT  /ex-app/status {progress, error}: /init's progress (OCSApiController::setAppInitProgress);
 * - POST /api/v2/ui/files-actions-menu: a Files action (OCSUiController::registerFileActionMenuV2);
 * - DELETE /api/v1/ui/files-actions-menu {name}: its removal (unregisterFileActionMenu).
 */
import { appApiHeaders, type AppApiIdentity } from './auth.ts'

const OCS_PREFIX = '/ocs/v1.php/apps/app_api'

/** registerFileActionMenuV2's parameters; `actionHandler` and `icon` are routes of this ExApp, behind AppAPI's proxy. */
export interface FileActionMenu {
  name: string
  displayName: string
  actionHandler: string
  icon: string
  /** A mime type or `file` / `dir` (AppAPI's filesplugin mimeMatches). */
  mime: string
  /** Nextcloud permission bits required on the file (1 = read). */
  permissions: number
  order: number
}

export interface AppApiClient {
  setInitProgress(progress: number, error?: string): Promise<void>
  registerFileAction(action: FileActionMenu): Promise<void>
  /** Removes it; one that is not registered is fine (AppAPI answers 404). */
  unregisterFileAction(name: string): Promise<void>
}

export interface AppApiClientOptions {
  nextcloudUrl: string
  identity: AppApiIdentity & { version: string }
  /** AppAPI's version, as its last request said (AA-VERSION); sent back as is. */
  appApiVersion: () => string
  timeoutMs?: number
  fetch?: typeof fetch
}

export class AppApiError extends Error {}

export function createAppApiClient(opts: AppApiClientOptions): AppApiClient {
  const doFetch = opts.fetch ?? fetch
  async function call(method: string, path: string, body: unknown, accept: number[] = []): Promise<void> {
    let res: Response
    try {
      res = await doFetch(`${opts.nextcloudUrl}${OCS_PREFIX}${path}`, {
        method,
        headers: {
          ...appApiHeaders(opts.identity, '', opts.appApiVersion()),
          'OCS-APIRequest': 'true',
          accept: 'application/json',
          'content-type': 'application/json',
        },
        body: JSON.stringify(body),
        redirect: 'manual',
        signal: AbortSignal.timeout(opts.timeoutMs ?? 10_000),
      })
    } catch (err) {
      throw new AppApiError(`Nextcloud at ${opts.nextcloudUrl} could not be reached for ${method} ${path}: ${(err as Error).message}`)
    }
    await res.body?.cancel()
    if ((res.status < 200 || res.status > 299) && !accept.includes(res.status)) {
      throw new AppApiError(`AppAPI answered ${res.status} to ${method} ${OCS_PREFIX}${path}`)
    }
  }
  return {
    setInitProgress: (progress, error) => call('PUT', '/ex-app/status', { progress, ...(error ? { error } : {}) }),
    registerFileAction: (action) => call('POST', '/api/v2/ui/files-actions-menu', action),
    unregisterFileAction: (name) => call('DELETE', '/api/v1/ui/files-actions-menu', { name }, [404]),
  }
}
