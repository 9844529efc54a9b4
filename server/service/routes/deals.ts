import { once } from 'node:events'
import { Router } from 'express'
import { currentTenant } from '../auth.ts'
import type { DealStore } from '../deal-store.ts'
import { OnChainDealsBody } from '../schemas.ts'
import { parseBody } from '../validation.ts'

export function createDealsRouter(deps: { deals: DealStore }): Router {
  const router = Router()
  router.post('/private/v1/get-on-chain-deals', async (req, res) => {
    const { sortBy, next } = parseBody(req, OnChainDealsBody, { optional: true })
    const chunks = deps.deals.pageChunks(currentTenant(res).id, sortBy, next)
    // First step before any byte is sent: a bad cursor still gets its 400.
    let step = await chunks.next()
    // Streamed in page order (a JS object would reorder numeric keys); `next` comes
    // last because it is known only at the end, which JSON object order allows.
    res.status(200).type('application/json')
    res.write('{"error":null,"result":{')
    try {
      let first = true
      while (!step.done) {
        const ok = res.write(first ? step.value : `,${step.value}`)
        first = false
        if (!ok) await once(res, 'drain')
        if (res.destroyed) return
        step = await chunks.next()
      }
    } catch (err) {
      // The store failed mid-page: cut the response, so the client sees it incomplete rather than waiting.
      res.destroy()
      throw err
    }
    res.end(`},"next":${JSON.stringify(step.value)}}`)
  })
  return router
}
