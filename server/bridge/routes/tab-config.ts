import { Router, type RequestHandler } from 'express'
import type { TabConfigResponse } from '../../shared/contracts/tab-config.ts'
import { speedInWords, type NetworkClock } from '../../shared/epochs.ts'
import { clockOf } from '../live-link.ts'
import { appSurface, requireOcsApiRequest } from '../ocs-guards.ts'
import type { SettingsStore } from '../settings-store.ts'

export const TAB_CONFIG_ROUTE = '/ocs/v2.php/apps/gateway/config'

export interface TabConfigDeps {
  auth: RequestHandler
  settings: SettingsStore
  simnetClock: NetworkClock
}

/** `GET /ocs/v2.php/apps/gateway/config`: what the sidebar tab needs for links and dates, for any logged-in user. */
export function createTabConfigRouter(deps: TabConfigDeps): Router {
  const router = Router()
  router.get(TAB_CONFIG_ROUTE, appSurface, deps.auth, requireOcsApiRequest, (_req, res) => {
    const link = deps.settings.effective()
    const clock = clockOf(link.network, deps.simnetClock)
    const speed = speedInWords(clock)
    const answer: TabConfigResponse = {
      success: true,
      config: {
        network: link.network,
        ipfsGateway: link.ipfsGateway,
        genesisTimestamp: clock.genesis,
        epochSeconds: clock.epochSeconds,
        ...(speed ? { speed } : {}),
      },
    }
    res.json(answer)
  })
  return router
}
