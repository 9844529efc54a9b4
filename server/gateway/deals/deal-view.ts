import { failureText } from '../../shared/contracts/copy-failure.ts'
import type { PdpMilestone } from '../../shared/contracts/file-info.ts'
import { epochToTimestamp, type ChainClock } from '../../shared/epochs.ts'
import type { Deal, FailedDeal } from '../content/index.ts'
import { shownState } from './deal-state.ts'
import type { DealView, GroupDeal, RouteName } from './types.ts'

/** How /file-info names each route's copies: a deal-market deal carries no `route`, a PDP copy `route: 'pdp'`. */
const WIRE_ROUTE: Record<RouteName, Deal['route']> = { market: undefined, pdp: 'pdp' }

/** A copy a provider took: a deal it accepted, or a PDP piece whose add was sent or that is in a data set. */
const taken = (d: GroupDeal) => d.proposalId !== undefined || d.addTxHash !== undefined || d.dataSetId !== undefined

/** The copy as /file-info shows it; a PDP copy's `dealId` is its data set (the contract says so), 0 before it has one. */
function shown(d: GroupDeal, state: Deal['state']): Deal {
  const route = WIRE_ROUTE[d.route]
  return {
    provider: d.provider,
    state,
    dealId: d.dealId ?? d.dataSetId ?? 0,
    endEpoch: d.endEpoch,
    isRetrievable: d.state === 'active' && d.retrievable,
    ...(route ? { route } : {}),
    ...(route && d.dataSetId !== undefined ? { dataSetId: d.dataSetId } : {}),
    ...(route && d.pieceId !== undefined ? { pieceId: d.pieceId } : {}),
    ...(route && d.lastProofEpoch !== undefined ? { lastProofEpoch: d.lastProofEpoch } : {}),
    ...(route ? { milestone: MILESTONE[state] } : {}),
    ...(route && state === 'published' && d.firstProofDueEpoch !== undefined ? { firstProofDueEpoch: d.firstProofDueEpoch } : {}),
    ...(route && state === 'active' && d.missedProofEpoch !== undefined && d.stopsCountingEpoch !== undefined
      ? { missedProofEpoch: d.missedProofEpoch, stopsCountingEpoch: d.stopsCountingEpoch }
      : {}),
  }
}

/** A PDP copy's milestone from its shown state: uploading (and being added) → committed → proved. */
const MILESTONE: Record<Deal['state'], PdpMilestone> = { proposed: 'uploading', published: 'committed', active: 'proved' }

/**
 * The copies of one group that a provider took and then failed, oldest
 * first, each saying whether another provider stood in for it: a copy made
 * after the failure that its provider took, one stand-in per failure, the
 * earliest failure served first.
 *
 * @example failedDealsOf(await store.ofGroup(7))
 *   // [{ provider: 'f01000', dealId: 12, reason: 'SEALING_FAILED', reasonCode: 'PROVIDER_FAILED', replaced: true }]
 */
export function failedDealsOf(deals: readonly GroupDeal[]): FailedDeal[] {
  const failures = deals.filter((d) => d.state === 'failed' && taken(d))
  if (failures.length === 0) return []
  const standIns = deals.filter(taken).sort((a, b) => a.createdMs - b.createdMs || a.id - b.id)
  const used = new Set<number>()
  const replaced = new Set<number>()
  for (const failure of [...failures].sort((a, b) => a.updatedMs - b.updatedMs || a.id - b.id)) {
    const standIn = standIns.find((d) => !used.has(d.id) && d.id > failure.id && d.createdMs >= failure.updatedMs)
    if (!standIn) continue
    used.add(standIn.id)
    replaced.add(failure.id)
  }
  return failures.map((d) => {
    const dealId = d.dealId ?? d.dataSetId
    const failure = d.failure ?? { code: 'UNKNOWN' as const }
    return {
      provider: d.provider,
      ...(dealId !== undefined ? { dealId } : {}),
      reason: failureText(failure),
      reasonCode: failure.code,
      replaced: replaced.has(d.id),
    }
  })
}

/** What /file-info shows of a group, from all its copies: the live ones, how many are retrievable, and the ones providers failed. */
export function viewOf(deals: readonly GroupDeal[]): DealView {
  const live: Deal[] = []
  for (const d of deals) {
    const state = shownState(d.state)
    if (state) live.push(shown(d, state))
  }
  const failedDeals = failedDealsOf(deals)
  return { deals: live, retrievableCopies: live.filter((d) => d.isRetrievable).length, ...(failedDeals.length > 0 ? { failedDeals } : {}) }
}

/**
 * The copies of `views` whose route has a clock of its own in `clocks` (the
 * Onchain Cloud's, read from its chain) dated on it: their end (how far their
 * payments are funded), last proof, first proof due and missed proof as unix
 * seconds, beside the epochs. The deal market's deals (which carry no route)
 * are left as CIDgravity's gateway has them, for the reader to date with its
 * network's clock; so is everything without a clock.
 */
export function datedViews(views: Map<number, DealView>, clocks: Partial<Record<string, ChainClock>>): Map<number, DealView> {
  const dated = (d: Deal): Deal => {
    const clock = d.route && clocks[d.route]
    if (!clock) return d
    const at = (epoch: number) => epochToTimestamp(clock, epoch)
    return {
      ...d,
      endTimestamp: at(d.endEpoch),
      ...(d.lastProofEpoch !== undefined ? { lastProofTimestamp: at(d.lastProofEpoch) } : {}),
      ...(d.firstProofDueEpoch !== undefined ? { firstProofDueTimestamp: at(d.firstProofDueEpoch) } : {}),
      ...(d.missedProofEpoch !== undefined ? { missedProofTimestamp: at(d.missedProofEpoch) } : {}),
      ...(d.stopsCountingEpoch !== undefined ? { stopsCountingTimestamp: at(d.stopsCountingEpoch) } : {}),
    }
  }
  return new Map([...views].map(([id, view]) => [id, { ...view, deals: view.deals.map(dated) }]))
}
