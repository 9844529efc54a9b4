import { Router } from 'express'
import { EPOCHS_PER_DAY, timestampToEpoch, type NetworkClock } from '../../shared/epochs.ts'
import { badRequest } from '../errors.ts'
import { EpochDurationBody, EpochFromTimestampBody } from '../schemas.ts'
import { parseBody } from '../validation.ts'

/** Unit conversions; pure arithmetic over the network's clock (a sped-up simulated network's too). */
export function createEpochsRouter(deps: { clock: NetworkClock }): Router {
  const router = Router()
  router.post('/private/v1/get-network-epoch-duration-from-days', (req, res) => {
    const { duration } = parseBody(req, EpochDurationBody)
    res.json({ error: null, result: duration * EPOCHS_PER_DAY })
  })
  router.post('/private/v1/get-network-epoch-from-unix-timestamp', (req, res) => {
    const { unixTimestamp } = parseBody(req, EpochFromTimestampBody)
    const epoch = timestampToEpoch(deps.clock, unixTimestamp / 1000)
    if (epoch < 0) throw badRequest(`unixTimestamp: is before the network's genesis (${Math.ceil(deps.clock.genesis * 1000)} ms)`)
    res.json({ error: null, result: epoch })
  })
  return router
}
