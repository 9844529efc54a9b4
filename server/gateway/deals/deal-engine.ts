import type { Logger } from '../../shared/logger.ts'
import type { ContentStore, RemoteSource } from '../content/index.ts'
import { checkRetrievals } from './check.ts'
import type { DealStore, GroupDeal } from './deal-store.ts'
import { createEngineContext } from './engine-context.ts'
import { createFollower } from './follow.ts'
import { offloadGroups } from './offload.ts'
import { createPlacement, type DealKind } from './place.ts'
import type { StorageProviderPort } from './provider-port.ts'
import { createRepairs } from './repair.ts'
import type { DealServiceClient } from './service-client.ts'

export interface DealTerms {
  /** Deal duration in epochs. */
  durationEpochs: number
  /** Attofil per GiB per epoch, decimal string; a deal's StoragePricePerEpoch is this × PieceSize / 2^30. */
  pricePerGiBEpoch: string
  /** Verified (Fil+) deals wanted; from network version 29 there are none, and deals go unverified. */
  verified: boolean
  /** A piece is padded with zeros to a provider's minimum piece size only up to this factor (Infinity: any). */
  maxPaddingFactor: number
  /** The deal must start this many epochs after the head (time to transfer and seal). */
  startOffsetEpochs: number
}

/** A group's deal progress as the engine last saw it. */
export interface DealProgress {
  /** Chain head of the engine's last pass (undefined before the first). */
  head?: number
  copies: number
  deals: GroupDeal[]
  /** The deal service's reason when the last search found no provider for the group. */
  noProviders?: string
  /** Set while the deal service cannot be reached. */
  serviceError?: string
  /** Set while the client address lacks the DataCap or escrow its deals need (nothing is proposed then). */
  fundsError?: string
  /** Whether new deals are verified, and why not where verified ones were asked for. */
  dealKind: DealKind
  retryAfterEpochs: number
  /** Wall-clock seconds per epoch, to say when a deal starts. */
  epochSeconds: number
}

export interface DealEngineOptions {
  deals: DealStore
  content: ContentStore
  service: DealServiceClient
  providers: StorageProviderPort
  /** The client (wallet) address proposals are made from. */
  clientAddress: string
  /** The gateway's URL as providers reach it (the CAR is served under it). */
  publicUrl: () => string
  terms: DealTerms
  /** Fixed number of copies; unset: the tenant's onboarding policy decides (3 if it cannot be read yet). */
  copies?: number
  /** Time between retrieval checks of one deal. */
  retrievalCheckMs: number
  /** Longest a call to a provider may take. */
  callTimeoutMs: number
  /** Longest a provider may take to answer a proposal (Boost's own client waits 60 s: storagemarket/lp2pimpl/net.go). */
  proposalTimeoutMs: number
  /** Chain time (30 s epochs) between deal status requests to a provider about one deal. */
  statusPollMs: number
  /** Longest fetching a whole piece back from one provider may take. */
  reloadTimeoutMs: number
  /**
   * A provider that failed a group is not asked again for that group before
   * this much chain time (converted to epochs) has passed since the proposal;
   * a failed repair reload waits as long. Chain time, so that a sped-up
   * simulated network retries at its own pace.
   */
  retryAfterMs: number
  /** Deals ending within this many epochs no longer count: new ones are made (renewal), offloaded groups are reloaded for it. */
  renewBeforeEpochs: number
  /**
   * Longest a group reloaded for repair is held with its bytes on disk while
   * its copies are not back (no provider takes it, deals keep failing): then
   * it is released to offloaded, and a new reload waits `retryAfterMs`.
   */
  repairHoldEpochs: number
  logger: Logger
  now?: () => number
  /** While this says so, ticks do nothing (the gateway lost its hold on the database and refuses writes). */
  paused?: () => boolean
}

export interface TickReport {
  proposed: number
  published: number
  activated: number
  failed: number
  checked: number
  offloaded: number
  /** Offloaded groups short of copies whose reload for new deals started. */
  repairing: number
  /** Repaired groups that went back to offloaded. */
  repaired: number
  /** Groups held past `repairHoldEpochs` without their copies, released to offloaded to try again later. */
  repairsGivenUp: number
  serviceError?: string
}

export interface DealEngine {
  /** One pass over every group and deal; concurrent calls share the running pass. */
  tick(): Promise<TickReport>
  /** Where offloaded groups come back from: providers of its active deals, retrievable ones first. */
  remoteSource(): RemoteSource
  /** The copies currently required per group. */
  requiredCopies(): number
  /** What the engine knows of a group's progress, for the `reason` /file-info gives. */
  progress(groupId: number): Promise<DealProgress>
  /** Why no deals are proposed at all right now (the client lacks DataCap or escrow); undefined while they can be. */
  fundsProblem(): string | undefined
  /** Whether new deals are verified (Fil+), and why not where verified ones were asked for. */
  dealKind(): DealKind
  /** Ticks every `intervalMs` until stopped. */
  start(intervalMs: number): void
  /** Stops ticking; held groups go back to offloaded, reloads under way are cut short. */
  stop(): Promise<void>
}

/**
 * The gateway's deal work, one `tick()` at a time: follow proposals and deals
 * (proposed → published → active, or failed/ended), check that active deals
 * can be retrieved, propose new deals for groups short of copies (via the
 * deal service's best providers), and offload groups whose copies are all
 * retrievable. Repair and renewal: a deal that ended, was slashed, fails its
 * retrieval checks or ends within `renewBeforeEpochs` stops counting, so new
 * deals are made; an offloaded group is reloaded for that (held in `reload`
 * with its CAR) and goes back to offloaded once its copies are back.
 * Every step reads and writes the gateway's store, so a restart resumes (a held group is
 * swept back to offloaded and reloaded again on the next tick).
 */
export function createDealEngine(o: DealEngineOptions): DealEngine {
  const { deals, providers, logger } = o
  const c = createEngineContext(o)
  const placement = createPlacement(c)
  const follower = createFollower(c)
  const repairs = createRepairs(c)
  const stopping = new AbortController()

  let running: Promise<TickReport> | undefined
  let timer: NodeJS.Timeout | undefined
  /** The chain head of the last pass, and whether the deal service answered: for `reason`. */
  let lastHead: number | undefined
  let serviceError: string | undefined

  // Only groups whose CAR is on disk can be sent: ready_for_deals, or offloaded ones reloaded for repair.
  const sendable = (g: { id: number; state: string }) => g.state === 'ready_for_deals' || (g.state === 'reload' && repairs.holds(g.id))

  async function tickOnce(): Promise<TickReport> {
    const r: TickReport = { proposed: 0, published: 0, activated: 0, failed: 0, checked: 0, offloaded: 0, repairing: 0, repaired: 0, repairsGivenUp: 0 }
    if (o.paused?.()) return r
    // Proposals in flight when a previous process died, once, before anything else.
    await (interrupted ??= deals.failInterrupted().catch((err) => {
      interrupted = undefined
      throw err
    }))
    const head = await providers.chainHead()
    lastHead = head
    await follower.proposals(head, r)
    await follower.chain(head, r)
    await checkRetrievals(c, r)
    try {
      if (o.copies === undefined) c.copies = await o.service.requiredCopies()
      await placement.place(head, r, sendable)
      // Only with the deal service up: a reload is pointless when nothing can be proposed.
      await repairs.start(head, r)
      serviceError = undefined
    } catch (err) {
      // Deal service down: nothing new is proposed, everything already placed goes on.
      r.serviceError = (err as Error).message
      serviceError = r.serviceError
    }
    await repairs.finish(head, r)
    await offloadGroups(c, head, r)
    return r
  }

  let interrupted: Promise<number> | undefined
  const tick = (): Promise<TickReport> => (running ??= tickOnce().finally(() => (running = undefined)))

  return {
    tick,
    remoteSource() {
      return {
        async sources(group) {
          const active = (await deals.liveOfGroup(group.id)).filter((d) => d.state === 'active')
          active.sort((a, b) => Number(b.retrievable) - Number(a.retrievable))
          return active.map((d) => ({
            provider: d.provider,
            // Shutdown aborts reloads too, so that it never waits out a slow provider.
            fetch: () => providers.retrievePiece(d.provider, d.pieceCid, group.carSize!, { signal: AbortSignal.any([AbortSignal.timeout(o.reloadTimeoutMs), stopping.signal]) }),
            // One block of a file being read: a provider call like any other, cut short when the reader goes.
            block: (cid, signal) => providers.retrieveBlock(d.provider, d.pieceCid, cid, { signal: AbortSignal.any([signal, AbortSignal.timeout(o.callTimeoutMs), stopping.signal]) }),
          }))
        },
      }
    },
    requiredCopies: () => c.copies,
    fundsProblem: () => placement.fundsError(),
    dealKind: () => placement.dealKind(),
    async progress(groupId) {
      return {
        head: lastHead,
        copies: c.copies,
        deals: await deals.ofGroup(groupId),
        noProviders: placement.noProviders(groupId),
        serviceError,
        fundsError: placement.fundsError(),
        dealKind: placement.dealKind(),
        retryAfterEpochs: c.retryAfterEpochs,
        epochSeconds: providers.epochSeconds,
      }
    },
    start(intervalMs) {
      const loop = () => {
        tick()
          .then((r) => {
            if (r.serviceError) logger.warn({ err: r.serviceError }, 'deal service unreachable; retrying next tick')
          })
          .catch((err) => logger.error({ err }, 'deal engine tick failed; retrying next tick'))
          .finally(() => {
            if (timer) timer = setTimeout(loop, intervalMs)
          })
      }
      timer = setTimeout(loop, 0)
    },
    async stop() {
      const t = timer
      timer = undefined
      clearTimeout(t)
      await running?.catch(() => undefined)
      stopping.abort(new Error('deal engine stopping'))
      await repairs.stop()
    },
  }
}
