/**
 * The endpoints AppAPI calls on an ExApp (nextcloud/app_api
 * lib/Service/AppAPIService.php):
 * - GET /heartbeat, without authentication (heartbeatExApp sends only Accept
 *   and Content-Type outside HaRP), until it answers 200 `{"status":"ok"}`;
 * - POST /init with AppAPI's headers and no user (dispatchExAppInitInternal):
 *   answered at once; the work runs after, and its progress goes to
 *   PUT ocs/v1.php/apps/app_api/ex-app/status (100 when done, or an error);
 * - PUT /enabled?enabled=1|0 (enableExApp / disableExApp): registers or
 *   removes what the app adds to Files, answering `{"error": ""}` or the
 *   reason, which AppAPI logs before it disables the app.
 * Every other route of this router needs AppAPI's headers too (auth.ts).
 */
import express, { type Router } from 'express'
import type { Logger } from '../../shared/logger.ts'
import { badRequest, setSurface } from '../errors.ts'
import type { AppApiClient, FileActionMenu } from './appapi-client.ts'
import { checkAppApiHeaders, type AppApiIdentity } from './auth.ts'

/** The Files action this ExApp adds: the Filecoin state of the chosen files, answered by FILE_ACTION_ROUTE. */
export const FILE_ACTION_ROUTE = '/exapp/file-action'
export const FILE_ACTION: FileActionMenu = {
  name: 'gateway-filecoin-state',
  displayName: 'Filecoin state',
  actionHandler: FILE_ACTION_ROUTE.slice(1),
  icon: 'img/app.svg',
  mime: 'file',
  permissions: 1,
  order: 90,
}

/** Three stacked discs, the app's storage sign, drawn in outline (the bridge keeps off plugin-ui's icons). */
const ACTION_ICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2">' +
  '<ellipse cx="12" cy="5.5" rx="7" ry="2.5"/><path d="M5 5.5v13c0 1.4 3.1 2.5 7 2.5s7-1.1 7-2.5v-13"/>' +
  '<path d="M5 12c0 1.4 3.1 2.5 7 2.5s7-1.1 7-2.5"/></svg>\n'

export interface ExAppLifecycleDeps {
  identity: AppApiIdentity & { version: string }
  appApi: AppApiClient
  /** Remembers AppAPI's version from each checked request, for the calls back. */
  sawAppApiVersion: (version: string) => void
  logger: Logger
}

export function createExAppLifecycleRouter(deps: ExAppLifecycleDeps): Router {
  const router = express.Router()
  const checked = (req: express.Request) => {
    setSurface(req, 'app')
    const call = checkAppApiHeaders(req.headers, deps.identity)
    deps.sawAppApiVersion(call.appApiVersion)
    return call
  }

  // The action's icon, fetched by AppAPI's Files plugin through the proxy (loadExAppInlineSvgIcon wants image/svg+xml).
  router.get(`/${FILE_ACTION.icon}`, (_req, res) => {
    res.type('image/svg+xml').send(ACTION_ICON)
  })

  router.get('/heartbeat', (_req, res) => {
    res.json({ status: 'ok' })
  })

  router.post('/init', (req, res) => {
    checked(req)
    res.json({})
    void initialise(deps)
  })

  router.put('/enabled', async (req, res) => {
    checked(req)
    const enabled = req.query.enabled
    if (enabled !== '0' && enabled !== '1') throw badRequest('enabled must be 0 or 1')
    try {
      if (enabled === '1') await deps.appApi.registerFileAction(FILE_ACTION)
      else await deps.appApi.unregisterFileAction(FILE_ACTION.name)
      deps.logger.info({ enabled: enabled === '1' }, 'AppAPI changed the ExApp state')
      res.json({ error: '' })
    } catch (err) {
      deps.logger.warn({ err }, 'enabling or disabling the ExApp failed')
      res.json({ error: (err as Error).message })
    }
  })
  return router
}

/** /init's work: register the Files action, then say 100 %, or say why not. */
async function initialise(deps: ExAppLifecycleDeps): Promise<void> {
  try {
    await deps.appApi.setInitProgress(0)
    await deps.appApi.registerFileAction(FILE_ACTION)
    await deps.appApi.setInitProgress(100)
  } catch (err) {
    deps.logger.warn({ err }, 'ExApp initialisation failed')
    await deps.appApi
      .setInitProgress(0, `The Filecoin gateway ExApp could not register with AppAPI: ${(err as Error).message}`)
      .catch((again: unknown) => deps.logger.warn({ err: again }, 'reporting the failed initialisation failed too'))
  }
}
