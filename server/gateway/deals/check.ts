import { blockMatchesCid } from '../content/verify-block.ts'
import type { EngineContext, TickReport } from './types.ts'

/** Retrieves one random block of the group from each active deal's provider and checks it against its CID. */
export async function checkRetrievals(c: EngineContext, r: TickReport): Promise<void> {
  const { deals, content, providers, logger } = c.o
  for (const d of await deals.inState('active')) {
    if (d.checkedMs !== undefined && c.now() - d.checkedMs < c.o.retrievalCheckMs) continue
    const cid = await content.sampleBlock(d.groupId)
    if (!cid) continue
    let ok = false
    try {
      const bytes = await c.withTimeout((signal) => providers.retrieveBlock(d.provider, d.pieceCid, cid, { signal }))
      ok = await blockMatchesCid(cid, bytes)
    } catch {
      ok = false
    }
    if (!ok && d.retrievable) logger.warn({ groupId: d.groupId, provider: d.provider }, 'retrieval check failed')
    await deals.recordCheck(d.id, ok)
    r.checked++
  }
}
