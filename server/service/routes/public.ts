import { Router } from 'express'
import type { Ticker } from '../ticker/index.ts'
import { EmptyBody, TickerByPairBody } from '../schemas.ts'
import { parseBody } from '../validation.ts'

export const API_VERSION = '1.0.0'

/** The public ticker endpoints return their payload bare (spec); get-version uses the envelope. */
export function createPublicRouter(deps: { ticker: Ticker }): Router {
  const router = Router()
  router.post('/public/v1/ticker/get-latest', (req, res) => {
    parseBody(req, EmptyBody, { optional: true })
    res.json(deps.ticker.latest())
  })
  router.post('/public/v1/ticker/get-latest-by-pair', (req, res) => {
    const { pair } = parseBody(req, TickerByPairBody)
    res.json(deps.ticker.byPair(pair))
  })
  router.get('/public/v1/get-version', (_req, res) => {
    res.json({ error: null, result: { version: API_VERSION } })
  })
  return router
}
