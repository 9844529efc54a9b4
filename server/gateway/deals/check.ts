import { blockMatchesCid } from '../content/verify-block.ts'
import type { EngineContext, TickReport } from './types.ts'

/** Retrieves one random block of the group from each active copy's provider (either route) and checks it against its CID. */
export async function checkRetrievals(c: EngineContext, r: TickReport): Promise<void> {
  const { deals, content, logger } = c.o
  for (const d of await deals.inState('active')) {
    if (d.checkedMs !== undefined && c.now() - d.checkedMs < c.o.retrievalCheckMs) continue
    const cid = await content.sampleBlock(d.groupId)
    if (!cid) continue
    let ok: boolean
    try {
      const bytes = await c.withTimeout((signal) => c.retrieveBlock(d, cid, signal))
      ok = await blockMatchesCid(cid, bytes)
    } catch {
      ok = false
    }
    if (!ok && d.retrievable) logger.warn({ groupId: d.groupId, provider: d.provider }, 'retrieval check failed')
    await deals.recordCheck(d.id, ok)
    r.checked++
  }
}
