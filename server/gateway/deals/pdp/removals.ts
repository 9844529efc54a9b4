import type { GroupDeal } from '../types.ts'
import { providerIdOf, type PdpContext } from './context.ts'

/**
 * A copy that no longer counts is no longer paid for: its provider is asked
 * to remove its piece from the data set, unless the chain shows it gone or
 * already scheduled (PDPVerifier refuses to schedule a piece twice). A
 * failure (the provider that stopped proving may not answer) is tried again
 * later, with back-off up to a day of chain time.
 */
export async function removeCopy(p: PdpContext, d: GroupDeal): Promise<void> {
  const copy = { providerId: providerIdOf(d.provider), dataSetId: BigInt(d.dataSetId!), pieceId: BigInt(d.pieceId!) }
  const fields = { groupId: d.groupId, provider: d.provider, dataSetId: d.dataSetId, pieceId: d.pieceId }
  try {
    if ((await p.client.removalState(copy)) === 'live') {
      const hash = await p.client.removeCopy(copy)
      p.logger.info({ ...fields, hash }, 'PDP copy removed from its data set: no longer paid for')
    }
    p.removals.forget(d.id)
  } catch (err) {
    // Said once; later tries only when they succeed.
    if (p.removals.failed(d.id) === 1)
      p.logger.warn({ err, ...fields }, 'removing a PDP copy that no longer counts failed; trying again later (it is paid for until then)')
  }
}

/** Removals to try now: failed ones whose wait is over, and, once after a start, every copy that ended with its piece on chain. */
export async function retryRemovals(p: PdpContext): Promise<void> {
  if (!p.resumed.removals) {
    p.resumed.removals = true
    for (const d of [...(await p.deals.inState('ended', 'pdp')), ...(await p.deals.inState('failed', 'pdp'))]) {
      if (d.pieceId !== undefined && !p.removals.has(d.id)) p.removals.schedule(d.id)
    }
  }
  for (const id of p.removals.keys()) {
    if (!p.removals.due(id)) continue
    const d = await p.deals.get(id)
    if (d?.dataSetId === undefined || d.pieceId === undefined) p.removals.forget(id)
    else await removeCopy(p, d)
  }
}
