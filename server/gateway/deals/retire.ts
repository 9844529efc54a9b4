import type { ContentStore, GroupRecord } from '../content/index.ts'
import type { Logger } from '../../shared/logger.ts'
import type { Liveness } from '../retire/liveness.ts'
import { bytes, counted } from '../words.ts'
import type { GroupCopies } from './copies.ts'
import type { RetiredCopies, StorageRoute } from './route.ts'
import type { DealStore, TickReport } from './types.ts'

/** What retirement works with: liveness, the grace period, and the engine's routes and stores. */
export interface RetirementOptions {
  liveness: Liveness
  /** RETIRE_AFTER_SECONDS, in ms: how long a group stays dead before it is retired (the undo window). */
  retireAfterMs: number
  content: ContentStore
  deals: DealStore
  logger: Logger
  /** The gateway's wall clock: the grace period is people's time, not a chain's. */
  now: () => number
  copies: GroupCopies
  routes: readonly StorageRoute[]
}

export interface Retirement {
  /** Marks groups dead or live again, retires those dead for the grace period, and finishes retirements under way. */
  run(r: TickReport): Promise<void>
  /**
   * Retires a group another way than for being dead (compact.ts: its live files are stored elsewhere now): `mark`
   * records it retired (false: not now), then its copies go as a dead group's do; `why` and `fields` start its log
   * line. False when it was not retired this time (in use, under a transfer or reload, or `mark` said no).
   */
  retireNow(g: GroupRecord, r: TickReport, how: { mark: () => Promise<boolean>; why: string; fields: object }): Promise<boolean>
}

/** Whether the engine may make copies of the group: not once nothing lives in it (dead or retired). */
export const keepsCopies = (g: Pick<GroupRecord, 'deadSinceMs'>): boolean => g.deadSinceMs === undefined

/**
 * Groups whose files are all deleted (or replaced), and that no folder's
 * current listing needs, are dead: from the first pass that sees it, a dead
 * group gets no new copy and no repair, and its copies go on as they are.
 * Once dead for `retireAfterMs` (an undo window, as Nextcloud's trash is: a
 * file restored meanwhile is the same bytes, the same CID, and the group
 * lives again, having cost nothing) it is retired, once and for good, in
 * this order, each step kept in the store so that a restart resumes it:
 * marked retired; its copies that can be stopped (PDP) ended and their
 * pieces removed, each paid for once; the others (deal-market deals, which
 * cannot be cancelled on chain) left to run to their term, never renewed;
 * its local bytes dropped if it was never offloaded. Its rows stay, for the record.
 */
export function createRetirement(o: RetirementOptions): Retirement {
  const { liveness, content, deals, logger, copies, routes } = o
  /** Retired groups' copies are looked at once after a start: a retirement a stop cut short ends them now. */
  let resumed = false

  /** Each route retires the group's live copies: how many were ended, and how many run to their term. */
  async function retireCopies(groupId: number): Promise<RetiredCopies> {
    const live = await deals.liveOfGroup(groupId)
    const total = { ended: 0, toTerm: 0 }
    for (const route of routes) {
      const done = await route.retire(live)
      total.ended += done.ended
      total.toTerm += done.toTerm
    }
    return total
  }

  /** A retired group never offloaded: its CAR and blocks go, once no provider may still fetch them and no read holds them. */
  async function dropLocalBytes(g: GroupRecord): Promise<boolean> {
    if (g.state !== 'ready_for_deals' || (await copies.transferPending(g.id))) return false
    return content.offload(g.id)
  }

  async function retire(g: GroupRecord, r: TickReport, how: Parameters<Retirement['retireNow']>[2]): Promise<boolean> {
    // Never under a repair's reload or a read's, a transfer to a provider, or an upload that found its blocks here.
    if (g.state === 'reload' || content.inUse(g.id) || (await copies.transferPending(g.id))) return false
    if (!(await how.mark())) return false
    const { ended, toTerm } = await retireCopies(g.id)
    const dropped = await dropLocalBytes(g)
    r.retired++
    const stops = [
      `${counted(ended, 'copy', 'copies')} ended and taken off chain (removal scheduled)`,
      `${counted(toTerm, 'deal', 'deals')} left to run to ${toTerm === 1 ? 'its' : 'their'} end (a deal cannot be cancelled on chain), never renewed`,
      ...(dropped ? [`its local CAR and blocks (${bytes(g.size)} of data) removed`] : []),
    ]
    logger.info(
      { groupId: g.id, pieceCid: g.pieceCid, ...how.fields, ended, toTerm, dropped },
      `${how.why}: no longer paid for: ${stops.join('; ')}; no new copy or repair`,
    )
    return true
  }

  return {
    async run(r) {
      const nowMs = o.now()
      const { died, revived } = await liveness.mark(nowMs)
      if (died.length > 0)
        logger.info(
          { groupIds: died, retireAfterSeconds: o.retireAfterMs / 1000 },
          'groups with nothing live left in them (their files deleted or replaced): no new copies; retired unless restored within the grace period',
        )
      if (revived.length > 0) logger.info({ groupIds: revived }, 'groups live again (a deleted file came back): copies kept as before')
      const firstPass = !resumed
      resumed = true
      for (const g of await content.groups()) {
        if (g.retiredMs !== undefined) {
          // Stopped after its mark, before its copies were ended: they are now (nothing is paid for twice).
          if (firstPass && g.deals.length > 0) await retireCopies(g.id)
          // Bytes a read held at its retirement.
          await dropLocalBytes(g)
        } else if (g.deadSinceMs !== undefined && nowMs - g.deadSinceMs >= o.retireAfterMs)
          await retire(g, r, {
            mark: () => liveness.retire(g.id, nowMs),
            why: `group retired, nothing live in it for ${Math.round((nowMs - g.deadSinceMs) / 60_000)} min`,
            fields: { deadSinceMs: g.deadSinceMs },
          })
      }
    },
    retireNow: retire,
  }
}
