import { blockMatchesCid } from '../content/verify-block.ts'
import type { StorageRoute } from './route.ts'
import type { DealStore, RouteContext, TickReport } from './types.ts'

/** Retrieves one random block of the group from each active copy's provider, on its route, and checks it against its CID. */
export async function checkRetrievals(
  c: Pick<RouteContext, 'content' | 'logger' | 'now' | 'withTimeout'> & { deals: DealStore; retrievalCheckMs: number },
  routeOf: (name: string) => StorageRoute,
  r: TickReport,
): Promise<void> {
  for (const d of await c.deals.inState('active')) {
    if (d.checkedMs !== undefined && c.now() - d.checkedMs < c.retrievalCheckMs) continue
    const cid = await c.content.sampleBlock(d.groupId)
    if (!cid) continue
    let ok: boolean
    try {
      const bytes = await c.withTimeout((signal) => routeOf(d.route).retrieveBlock(d, cid, signal))
      ok = await blockMatchesCid(cid, bytes)
    } catch {
      ok = false
    }
    if (!ok && d.retrievable) c.logger.warn({ groupId: d.groupId, provider: d.provider }, 'retrieval check failed')
    await c.deals.recordCheck(d.id, ok)
    r.checked++
  }
}
