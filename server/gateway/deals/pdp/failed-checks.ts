import { failingChecks as failingCheck } from '../copies.ts'
import type { PdpContext } from './context.ts'
import { removeCopy } from './removals.ts'

/**
 * Copies that failed their retrieval checks (enough in a row: deals/check.ts) stop being paid for once their
 * replacements count: while the group has fewer other proved copies than it
 * keeps, the failing one stays (its provider may still hold the data, and
 * a later check may pass); from then on it is ended as RETRIEVAL_FAILED and
 * its piece removed like any copy that no longer counts.
 */
export async function retireFailedChecks(p: PdpContext): Promise<void> {
  for (const d of (await p.deals.inState('active', 'pdp')).filter(failingCheck)) {
    const others = (await p.deals.liveOfGroup(d.groupId, 'pdp')).filter((x) => x.id !== d.id && x.state === 'active' && !failingCheck(x))
    if (others.length < p.options.copies) continue
    await p.deals.markEnded(d.id, { code: 'RETRIEVAL_FAILED', detail: 'its retrieval checks failed; replaced by a copy that is proved' })
    p.logger.warn(
      { groupId: d.groupId, provider: d.provider, replacedBy: others.map((x) => x.provider) },
      'PDP copy that failed its retrieval checks is replaced: no longer kept or paid for',
    )
    await removeCopy(p, d)
  }
}
