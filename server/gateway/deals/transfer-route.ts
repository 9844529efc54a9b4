import { Router, type Response } from 'express'
import { timingSafeEqual } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { pipeline } from 'node:stream/promises'
import { sha256Hex } from '../../shared/secrets.ts'
import type { ContentStore } from '../content/index.ts'
import { GatewayError } from '../errors.ts'
import type { DealStore } from './deal-store.ts'

export const TRANSFER_PATH = '/deal-transfer'

/**
 * `GET /deal-transfer/<deal>`: the CAR of one proposed deal, for the provider
 * that took it, with `Authorization: Bearer <token of that deal>`. Mounted
 * before the gateway's basic auth: the token is the credential, it only opens
 * this one CAR, and it dies once the deal is published or fails.
 */
export function createTransferRouter(deps: { deals: DealStore; content: ContentStore }): Router {
  const router = Router()
  router.get(`${TRANSFER_PATH}/:id`, (req, res, next) => {
    // Not one of ours: let WebDAV answer for whatever lives at this path.
    const header = req.headers.authorization ?? ''
    if (!/^[1-9][0-9]{0,15}$/.test(req.params.id) || !header.startsWith('Bearer ')) return next()
    serve(req.params.id, header, res).catch((err: NodeJS.ErrnoException) => {
      if (res.headersSent) return res.destroy(err)
      next(err.code === 'ENOENT' ? new GatewayError(410, 'CAR_GONE', 'The CAR of this deal is no longer on the gateway') : err)
    })
  })

  async function serve(id: string, header: string, res: Response): Promise<void> {
    const deal = await deps.deals.get(Number(id))
    const token = header.slice(7).trim()
    const given = Buffer.from(sha256Hex(token))
    if (!deal?.tokenHash || !token || !timingSafeEqual(given, Buffer.from(deal.tokenHash))) {
      throw new GatewayError(401, 'TRANSFER_UNAUTHORIZED', 'Unknown deal or wrong transfer token', { 'WWW-Authenticate': 'Bearer' })
    }
    const car = await deps.content.carFile(deal.groupId)
    if (!car) throw new GatewayError(410, 'CAR_GONE', 'The CAR of this deal is no longer on the gateway')
    const s = await stat(car)
    res.status(200).set({ 'Content-Type': 'application/vnd.ipld.car; version=1', 'Content-Length': String(s.size) })
    await pipeline(createReadStream(car), res)
  }
  return router
}
