import { checkRetrievals } from './check.ts'
import { createEngineContext } from './engine-context.ts'
import { createFollower } from './follow.ts'
import { offloadGroups } from './offload.ts'
import { createPdpRoute } from './pdp-route.ts'
import { createPlacement } from './place.ts'
import { createRepairs } from './repair.ts'
import type { DealEngine, DealEngineOptions, TickReport } from './types.ts'

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
  const pdp = o.pdp && createPdpRoute(c, o.pdp)
  const stopping = new AbortController()

  let running: Promise<TickReport> | undefined
  let timer: NodeJS.Timeout | undefined
  /** The chain head of the last pass, and whether the deal service answered: for `reason`. */
  let lastHead: number | undefined
  /** The earliest end of the active deal-market deals, as of the last pass. */
  let firstDealEnd: number | undefined
  let serviceError: string | undefined

  // Only groups whose CAR is on disk can be sent: ready_for_deals, or offloaded ones reloaded for repair.
  const sendable = (g: { id: number; state: string }) => g.state === 'ready_for_deals' || (g.state === 'reload' && repairs.holds(g.id))

  async function tickOnce(): Promise<TickReport> {
    const r: TickReport = {
      proposed: 0,
      published: 0,
      activated: 0,
      failed: 0,
      checked: 0,
      offloaded: 0,
      repairing: 0,
      repaired: 0,
      repairsGivenUp: 0,
    }
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
    // The PDP route needs no deal service: it goes on whether or not the service answers.
    await pdp?.follow(r).catch((err) => logger.warn({ err }, 'following PDP copies failed; retrying next tick'))
    await checkRetrievals(c, r)
    await pdp?.place(head, r, sendable).catch((err) => logger.warn({ err }, 'placing PDP copies failed; retrying next tick'))
    try {
      if (o.copies === undefined) c.copies = await o.service.requiredCopies()
      await placement.place(head, r, sendable)
      await repairs.start(head, r)
      serviceError = undefined
    } catch (err) {
      // Deal service down: nothing new is proposed, everything already placed goes on. Groups short of PDP
      // copies are still reloaded, since the SDK makes those without the service; a reload only for market deals would wait.
      r.serviceError = (err as Error).message
      serviceError = r.serviceError
      if (pdp) await repairs.start(head, r, ['pdp'])
    }
    await repairs.finish(head, r)
    await offloadGroups(c, head, r)
    const ends = (await deals.inState('active', 'market')).map((d) => d.endEpoch)
    firstDealEnd = ends.length > 0 ? Math.min(...ends) : undefined
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
          // Retrievable copies first, and of those PDP's: warm copies are served at once, unsealed from proofs.
          active.sort((a, b) => Number(b.retrievable) - Number(a.retrievable) || Number(b.route === 'pdp') - Number(a.route === 'pdp'))
          return active.map((d) => ({
            provider: d.provider,
            // Shutdown aborts reloads too, so that it never waits out a slow provider.
            fetch: () => c.retrievePiece(d, group.carSize!, AbortSignal.any([AbortSignal.timeout(o.reloadTimeoutMs), stopping.signal])),
            // One block of a file being read: a provider call like any other, cut short when the reader goes.
            block: (cid, signal) =>
              c.retrieveBlock(d, cid, AbortSignal.any([signal, AbortSignal.timeout(o.callTimeoutMs), stopping.signal])),
          }))
        },
      }
    },
    requiredCopies: () => c.copies,
    fundsProblem: () => placement.fundsError(),
    pdpFunding: () => pdp?.funding(),
    marketFunding() {
      const funds = placement.clientFunds()
      if (!funds) return undefined
      const dealsUntilMs =
        firstDealEnd === undefined || lastHead === undefined
          ? undefined
          : c.now() + (firstDealEnd - lastHead) * providers.epochSeconds * 1000
      return { ...funds, ...(dealsUntilMs === undefined ? {} : { dealsUntilMs }) }
    },
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
        ...(pdp ? { pdp: pdp.progress(groupId) } : {}),
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
      await pdp?.stop()
      await repairs.stop()
    },
  }
}
