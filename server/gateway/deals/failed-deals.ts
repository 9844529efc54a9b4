import type { FailedDeal } from '../content/index.ts'
import type { GroupDeal } from './types.ts'

/** A proposal the provider took (it has the provider's deal UUID); a refused or unanswered one never became a deal. */
const accepted = (d: GroupDeal) => d.proposalId !== undefined

/**
 * The deals of one group that a provider accepted and then failed, oldest
 * first, each saying whether another provider stood in for it: a deal
 * proposed after the failure that its provider took, one stand-in per
 * failure, the earliest failure served first.
 *
 * @example failedDealsOf(await store.ofGroup(7))
 *   // [{ provider: 'f01000', dealId: 12, reason: 'SEALING_FAILED', replaced: true }]
 */
export function failedDealsOf(deals: readonly GroupDeal[]): FailedDeal[] {
  const failures = deals.filter((d) => d.state === 'failed' && accepted(d))
  if (failures.length === 0) return []
  const standIns = deals.filter(accepted).sort((a, b) => a.createdMs - b.createdMs || a.id - b.id)
  const used = new Set<number>()
  const replaced = new Set<number>()
  for (const failure of [...failures].sort((a, b) => a.updatedMs - b.updatedMs || a.id - b.id)) {
    const standIn = standIns.find((d) => !used.has(d.id) && d.id > failure.id && d.createdMs >= failure.updatedMs)
    if (!standIn) continue
    used.add(standIn.id)
    replaced.add(failure.id)
  }
  return failures.map((d) => ({
    provider: d.provider,
    ...(d.dealId !== undefined ? { dealId: d.dealId } : {}),
    reason: d.reason ?? 'UNKNOWN',
    replaced: replaced.has(d.id),
  }))
}
