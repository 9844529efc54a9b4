import type { ContentStore } from '../content/index.ts'
import type { Logger } from '../../shared/logger.ts'
import { headOf, type GroupCopies, type RouteHeads } from './copies.ts'
import { keepsCopies } from './retire.ts'
import type { StorageRoute } from './route.ts'
import type { TickReport } from './types.ts'

/**
 * Where a group's repair stands, for its reason: its data being reloaded from
 * a provider, held with its CAR while new copies are made (the routes say
 * how they stand), or its local bytes being removed again, its copies back
 * (`repaired`) or not in time (`given-up`, reloaded again after the retry wait).
 */
export type RepairPhase = { phase: 'reloading' } | { phase: 'held' } | { phase: 'releasing'; why: 'repaired' | 'given-up' }

interface Repair {
  /** Set once the group is local with its CAR. */
  release?: () => Promise<void>
  /** Set while its release runs. */
  releasing?: 'repaired' | 'given-up'
  /** The timing chain's head when the group became local. */
  heldSince?: number
  pending?: Promise<void>
  /** The timing chain's head when the reload failed. */
  failedAt?: number
}

export interface Repairs {
  /** Reloads offloaded groups short of copies on one of `routes`, in the background, to hold them for new deals. */
  start(heads: RouteHeads, r: TickReport, routes: readonly StorageRoute[]): Promise<void>
  /** Releases held groups whose copies are back, or that were held too long. */
  finish(heads: RouteHeads, r: TickReport): Promise<void>
  /** Whether the group is held locally, with its CAR, for new deals. */
  holds(groupId: number): boolean
  /** Where the group's repair stands; undefined when none is under way. */
  phase(groupId: number): RepairPhase | undefined
  /** Waits for reloads under way and releases every held group (they resume on the next start). */
  stop(): Promise<void>
}

/**
 * Offloaded groups short of copies (deals expired, slashed, ending soon, or
 * a provider lost the data) are reloaded from a remaining provider, in the
 * background, and held in `reload` with their CAR so new deals can fetch it.
 * A held group goes back to offloaded once enough lasting copies are
 * retrievable again, or, so that its bytes do not stay on disk for ever,
 * once it has been held `repairHoldEpochs` (never while a provider is still
 * fetching its CAR); the next reload then waits `retryAfterEpochs`.
 *
 * Both waits are the gateway's own (bytes on its disk), counted in the
 * epochs of one chain, `timedBy`'s: a hold started at one head is ended at a
 * head of the same chain, never compared with another chain's epochs (the
 * deal market's and the Onchain Cloud's need not agree). Chain time, so that
 * a sped-up simulated network holds at its own pace.
 */
export function createRepairs(o: {
  content: ContentStore
  logger: Logger
  copies: GroupCopies
  retryAfterEpochs: number
  repairHoldEpochs: number
  /** The route whose chain's epochs time the holds and retries. */
  timedBy: Pick<StorageRoute, 'name'>
}): Repairs {
  const { content, logger, copies } = o
  const repairs = new Map<number, Repair>()
  const timeOf = (heads: RouteHeads) => headOf(heads, o.timedBy)

  return {
    holds(groupId) {
      const repair = repairs.get(groupId)
      return repair?.release !== undefined && !repair.releasing
    },
    phase(groupId) {
      const repair = repairs.get(groupId)
      if (repair?.releasing) return { phase: 'releasing', why: repair.releasing }
      if (repair?.release) return { phase: 'held' }
      return repair?.pending ? { phase: 'reloading' } : undefined
    },
    async start(heads, r, routes) {
      const head = timeOf(heads)
      for (const g of await content.groups()) {
        // A group with nothing live left in it is not repaired: it is retired unless restored.
        if (g.state !== 'offloaded' || !keepsCopies(g)) continue
        if (!(await copies.short(g.id, heads, routes))) continue
        const previous = repairs.get(g.id)
        if (previous && (previous.failedAt === undefined || head - previous.failedAt < o.retryAfterEpochs)) continue
        const repair: Repair = {}
        repair.pending = content
          .holdForDeals(g.id)
          .then((release) => {
            repair.release = release
            repair.heldSince = head
            logger.info({ groupId: g.id }, 'group reloaded for new deals')
          })
          .catch((err) => {
            repair.failedAt = head
            logger.warn({ err, groupId: g.id }, 'group short of copies could not be reloaded; retrying later')
          })
          .finally(() => (repair.pending = undefined))
        repairs.set(g.id, repair)
        r.repairing++
        logger.info(
          { groupId: g.id, copies: await copies.counts(g.id, heads) },
          'offloaded group short of copies: reloading it for new deals',
        )
      }
    },
    async finish(heads, r) {
      const head = timeOf(heads)
      for (const [groupId, repair] of repairs) {
        if (!repair.release || (await copies.transferPending(groupId))) continue
        const release = repair.release
        if (await copies.satisfied(groupId, heads)) {
          repair.releasing = 'repaired'
          await release().finally(() => repairs.delete(groupId))
          r.repaired++
          logger.info({ groupId, retrievableCopies: await copies.retrievable(groupId, heads) }, 'group repaired: back to offloaded')
        } else if (head - repair.heldSince! >= o.repairHoldEpochs) {
          repair.releasing = 'given-up'
          repair.failedAt = head
          await release().finally(() => {
            repair.release = undefined
            repair.releasing = undefined
          })
          r.repairsGivenUp++
          logger.warn(
            { groupId, copies: await copies.counts(groupId, heads) },
            'group held for repair too long without its copies: local bytes removed again, retrying later',
          )
        }
      }
    },
    async stop() {
      await Promise.all([...repairs.values()].map((x) => x.pending))
      for (const [groupId, repair] of repairs) {
        repairs.delete(groupId)
        await repair.release?.().catch((err) => logger.warn({ err, groupId }, 'releasing a held group failed'))
      }
    },
  }
}
