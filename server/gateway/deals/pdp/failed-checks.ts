import { failingChecks as failingCheck } from '../copies.ts'
import type { RouteContext } from '../types.ts'
import type { Removals } from './removals.ts'
import type { PdpRouteOptions } from './types.ts'

/**
 * Copies that failed their retrieval checks (enough in a row: deals/check.ts) stop being paid for once their
 * replacements count: while the group has fewer other proved copies than it
 * keeps, the failing one stays (its provider may still hold the data, and
 * a later check may pass); from then on it is ended as RETRIEVAL_FAILED and
 * its piece removed like any copy that no longer counts.
 */
export async function retireFailedChecks(
  o: Pick<RouteContext, 'deals' | 'logger'> & Pick<PdpRouteOptions, 'copies'> & { removals: Pick<Removals, 'remove'> },
): Promise<void> {
  const { deals, logger } = o
  for (const d of (await deals.inState('active', 'pdp')).filter(failingCheck)) {
    const others = (await deals.liveOfGroup(d.groupId, 'pdp')).filter((x) => x.id !== d.id && x.state === 'active' && !failingCheck(x))
    if (others.length < o.copies) continue
    await deals.markEnded(d.id, { code: 'RETRIEVAL_FAILED', detail: 'its retrieval checks failed; replaced by a copy that is proved' })
    logger.warn(
      { groupId: d.groupId, provider: d.provider, replacedBy: others.map((x) => x.provider) },
      'PDP copy that failed its retrieval checks is replaced: no longer kept or paid for',
    )
    await o.removals.remove(d)
  }
}
