import type { GroupDeal } from '../types.ts'
import type { PdpContext } from './context.ts'
import { removeCopy } from './removals.ts'

/** An active copy whose last retrieval check failed (deals/copies.ts counts it no more). */
const failingCheck = (d: GroupDeal) => d.state === 'active' && d.checkedMs !== undefined && !d.retrievable

/**
 * Copies that failed their retrieval check stop being paid for once their
 * replacements count: while the group has fewer other proved copies than it
 * keeps, the failing one stays (its provider may still hold the data, and
 * a later check may pass); from then on it is ended as RETRIEVAL_FAILED and
 * its piece removed like any copy that no longer counts.
 */
export async function retireFailedChecks(p: PdpContext): Promise<void> {
  for (const d of (await p.deals.inState('active', 'pdp')).filter(failingCheck)) {
    const others = (await p.deals.liveOfGroup(d.groupId, 'pdp')).filter((x) => x.id !== d.id && x.state === 'active' && !failingCheck(x))
    if (others.length < p.options.copies) continue
    await p.deals.markEnded(d.id, { code: 'RETRIEVAL_FAILED', detail: 'its retrieval check failed; replaced by a copy that is proved' })
    p.logger.warn(
      { groupId: d.groupId, provider: d.provider, replacedBy: others.map((x) => x.provider) },
      'PDP copy that failed its retrieval check is replaced: no longer kept or paid for',
    )
    await removeCopy(p, d)
  }
}
