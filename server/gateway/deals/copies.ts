import { retryClassOf } from '../../shared/contracts/copy-failure.ts'
import { LIVE_STATES } from './deal-state.ts'
import type { StorageRoute } from './route.ts'
import type { DealStore, GroupDeal } from './types.ts'

/**
 * An active copy whose retrieval checks failed in a row, enough of them and
 * each while other providers answered (deals/check.ts): the provider lost or
 * altered the data. One failed check, or checks failed while nothing could
 * be reached, is not enough.
 */
export const failingChecks = (d: GroupDeal) => d.state === 'active' && d.checkFailedMs !== undefined

/**
 * The group's copies on `route` that hold (or will soon hold) its data
 * for a while: not about to end, and not an active one whose retrieval
 * checks show its provider no longer serves it. Fewer than the route requires: repair.
 */
export const countingCopies = (route: Pick<StorageRoute, 'name' | 'lasting'>, deals: readonly GroupDeal[], head: number) =>
  deals.filter((d) => d.route === route.name && LIVE_STATES.includes(d.state) && route.lasting(d, head) && !failingChecks(d))

/** Copies on `route` that can be retrieved now and will last: what offload (and the end of a repair) waits for. */
export const lastingRetrievable = (route: StorageRoute, live: readonly GroupDeal[], head: number) =>
  live.filter((d) => d.route === route.name && d.state === 'active' && d.retrievable && route.lasting(d, head)).length

/**
 * Each route's chain head this pass, by route name: a route's copies are judged at its own chain's head
 * (the deal market's epochs are not the Onchain Cloud's).
 */
export type RouteHeads = ReadonlyMap<string, number>

/** `route`'s head among `heads`; every route the engine runs has one by the time copies are judged. */
export function headOf(heads: RouteHeads, route: Pick<StorageRoute, 'name'>): number {
  const head = heads.get(route.name)
  if (head === undefined) throw new Error(`no chain head of the ${route.name} route this pass`)
  return head
}

/** What the engine asks of a group's copies across its routes, each route's at its own chain's head. */
export interface GroupCopies {
  /** Whether every route has the lasting, retrievable copies it requires: the group may be offloaded. */
  satisfied(groupId: number, heads: RouteHeads): Promise<boolean>
  /** Whether one of `routes` has fewer counting copies than it requires: new ones are to be made. */
  short(groupId: number, heads: RouteHeads, routes: readonly StorageRoute[]): Promise<boolean>
  /** Whether a provider on some route may still be fetching (or be sent) the group's CAR. */
  transferPending(groupId: number): Promise<boolean>
  /** Retrievable lasting copies, summed over routes (for the log). */
  retrievable(groupId: number, heads: RouteHeads): Promise<number>
  /** Counting copies of each route against what it requires, for the log: `{ market: '1 of 3', pdp: '2 of 2' }`. */
  counts(groupId: number, heads: RouteHeads): Promise<Record<string, string>>
}

export function groupCopies(deals: DealStore, routes: readonly StorageRoute[]): GroupCopies {
  return {
    async satisfied(groupId, heads) {
      const live = await deals.liveOfGroup(groupId)
      return routes.every((route) => lastingRetrievable(route, live, headOf(heads, route)) >= route.required())
    },
    async short(groupId, heads, among) {
      const live = await deals.liveOfGroup(groupId)
      return among.some((route) => countingCopies(route, live, headOf(heads, route)).length < route.required())
    },
    async transferPending(groupId) {
      const live = await deals.liveOfGroup(groupId)
      return routes.some((route) => route.transferPending(groupId, live))
    },
    async retrievable(groupId, heads) {
      const live = await deals.liveOfGroup(groupId)
      return routes.reduce((n, route) => n + lastingRetrievable(route, live, headOf(heads, route)), 0)
    },
    async counts(groupId, heads) {
      const live = await deals.liveOfGroup(groupId)
      return Object.fromEntries(
        routes.map((route) => [route.name, `${countingCopies(route, live, headOf(heads, route)).length} of ${route.required()}`]),
      )
    },
  }
}

/**
 * Providers not to ask for a copy of this group now: those holding a live
 * copy of it, those whose copy failed or ended within `retryAfterEpochs`
 * of chain time (retry class `later`), and those never to be asked again
 * (`never`: they may hold a deal for the piece that we do not know of).
 * Chain time is counted from the failure, on the route's epochs.
 */
export function providersToSkip(
  history: readonly GroupDeal[],
  o: { now: number; epochSeconds: number; retryAfterEpochs: number },
): Set<string> {
  const skip = new Set<string>()
  for (const d of history) {
    if (d.state !== 'failed' && d.state !== 'ended') {
      skip.add(d.provider)
      continue
    }
    const retry = retryClassOf(d.failure?.code ?? 'UNKNOWN')
    const epochsSince = (o.now - d.updatedMs) / 1000 / o.epochSeconds
    if (retry === 'never' || (retry === 'later' && epochsSince < o.retryAfterEpochs)) skip.add(d.provider)
  }
  return skip
}
