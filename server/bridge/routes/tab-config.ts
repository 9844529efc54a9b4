import { Router, type RequestHandler } from 'express'
import type { TabConfigResponse } from '../../shared/contracts/tab-config.ts'
import { speedInWords } from '../../shared/epochs.ts'
import { clockOf, type LiveLink } from '../live-link.ts'
import { appSurface, requireOcsApiRequest } from '../ocs-guards.ts'

export const TAB_CONFIG_ROUTE = '/ocs/v2.php/apps/gateway/config'

export interface TabConfigDeps {
  auth: RequestHandler
  /** The network is the gateway's word where it gives one (gateway-network.ts), never only the admin's label. */
  link: Pick<LiveLink, 'effective' | 'network' | 'answeredNetwork' | 'simnetClock'>
}

/** `GET /ocs/v2.php/apps/gateway/config`: what the sidebar tab needs for links and dates, for any logged-in user. */
export function createTabConfigRouter(deps: TabConfigDeps): Router {
  const router = Router()
  router.get(TAB_CONFIG_ROUTE, appSurface, deps.auth, requireOcsApiRequest, async (_req, res) => {
    const link = deps.link.effective()
    const network = await deps.link.answeredNetwork()
    const clock = clockOf(network, deps.link.simnetClock)
    const speed = speedInWords(clock)
    const answer: TabConfigResponse = {
      success: true,
      config: {
        network,
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
