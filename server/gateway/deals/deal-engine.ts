import type { GroupRecord, RemoteSource } from '../content/index.ts'
import { createRetrievalChecks } from './check.ts'
import { groupCopies } from './copies.ts'
import { createHeadReader } from './route-heads.ts'
import { offloadGroups } from './offload.ts'
import { createRepairs, type RepairPhase } from './repair.ts'
import { createCompaction, type CompactionOptions } from './compact.ts'
import { createRetirement, keepsCopies, type RetirementOptions } from './retire.ts'
import type { RouteProgress, RouteStanding, StorageRoute } from './route.ts'
import type { GroupDeal, RouteContext, RouteName, TickReport } from './types.ts'

/** What the deal engine works with: the routes' shared context, the routes (each reads its own chain's head), and its timings. */
export interface DealEngineOptions {
  /** The stores, the log, the clock and the call timeout, as every route has them. */
  context: RouteContext
  /**
   * The storage routes, in the order their steps are told (at least one). The first one's chain times
   * the repairs' holds and retries (repair.ts).
   */
  routes: StorageRoute[]
  /** What the engine says of routes it does not run, beside what its routes say (the deal market off, and why). */
  standing?: RouteStanding
  /** Time between retrieval checks of one copy. */
  retrievalCheckMs: number
  /**
   * Retrieval checks a copy fails in a row, each while other providers could be reached, before it stops
   * counting and is replaced (RETRIEVAL_FAILED_CHECKS; default 3).
   */
  retrievalFailedChecks?: number
  /** Longest a call to a provider (one block of a file being read) may take. */
  callTimeoutMs: number
  /** Longest fetching a whole piece back from one provider may take. */
  reloadTimeoutMs: number
  /**
   * Longest a group reloaded for repair is held with its bytes on disk while
   * its copies are not back (no provider takes it, copies keep failing): then
   * it is released to offloaded, and a new reload waits the context's `retryAfterEpochs`.
   */
  repairHoldEpochs: number
  /** While this says so, ticks do nothing (the gateway lost its hold on the database and refuses writes). */
  paused?: () => boolean
  /** Which groups still hold something live, and how long a dead one waits before it is retired; none retired without it. */
  retirement?: Pick<RetirementOptions, 'liveness' | 'retireAfterMs'> & {
    /** Groups mostly dead are compacted (their live files written again, then retired); none without it. */
    compaction?: Pick<CompactionOptions, 'rows' | 'deadFraction' | 'listings' | 'storeListingsAgain'>
  }
}

/** A group's copies on every route, as the engine last saw them: for its reason. */
export interface DealProgress {
  deals: GroupDeal[]
  /** One per route, in the engine's order. */
  routes: RouteProgress[]
  /** Where its repair stands, while one is under way (the group is then in `reload`). */
  repair?: RepairPhase
}

/** The gateway's deal work: placing, following, checking, offloading and repairing groups' copies. */
export interface DealEngine {
  /** The routes it keeps copies on, in its order. */
  readonly routes: RouteName[]
  /** One pass over every group and copy; concurrent calls share the running pass. */
  tick(): Promise<TickReport>
  /** Where offloaded groups come back from: providers of its active copies, retrievable and warm ones first. */
  remoteSource(): RemoteSource
  /** What the engine knows of a group's progress, for the `reason` /file-info gives. */
  progress(groupId: number): Promise<DealProgress>
  /** What pays for each route's copies, as last read. */
  standing(): RouteStanding
  /** Ticks every `intervalMs` until stopped. */
  start(intervalMs: number): void
  /** Stops ticking; held groups go back to offloaded, work under way is cut short. */
  stop(): Promise<void>
}

/** Failed retrieval checks in a row after which a copy stops counting, unless told otherwise. */
export const DEFAULT_FAILED_CHECKS = 3

/** A pass's report before it has done anything. */
export const emptyReport = (): TickReport => ({
  proposed: 0,
  published: 0,
  activated: 0,
  failed: 0,
  checked: 0,
  offloaded: 0,
  repairing: 0,
  repaired: 0,
  repairsGivenUp: 0,
  retired: 0,
})

/**
 * The gateway's deal work, one `tick()` at a time, over its storage routes
 * (the deal market, Filecoin Onchain Cloud), each on its own chain: every
 * route's head is read once a pass and its copies judged at it (a market
 * deal's epochs are the Lotus chain's, a PDP copy's the FEVM chain's). Each
 * route follows its copies, every active copy is checked for retrieval, each
 * route makes copies for groups short of them, and groups whose copies on
 * every route are retrievable are offloaded. Repair and renewal: a copy that ended, fails its
 * retrieval checks or (market) ends within the renewal window stops counting,
 * so new ones are made; an offloaded group is reloaded for that (held in
 * `reload` with its CAR) and goes back to offloaded once its copies are back.
 * Every step reads and writes the gateway's store, so a restart resumes (a
 * held group is swept back to offloaded and reloaded again on the next tick).
 */
export function createDealEngine(o: DealEngineOptions): DealEngine {
  const { routes } = o
  if (routes.length === 0) throw new Error('a deal engine needs a storage route')
  const { deals, content, logger } = o.context
  const copies = groupCopies(deals, routes)
  const repairs = createRepairs({
    content,
    logger,
    copies,
    retryAfterEpochs: o.context.retryAfterEpochs,
    repairHoldEpochs: o.repairHoldEpochs,
    // The deal market's chain when it runs (the engine's only clock before routes had their own, so holds keep
    // their length), else the Onchain Cloud's: one chain, so that a hold is measured in epochs of one clock.
    timedBy: routes[0],
  })
  const retirement = o.retirement && createRetirement({ ...o.retirement, content, deals, logger, now: o.context.now, copies, routes })
  const compaction =
    retirement &&
    o.retirement?.compaction &&
    createCompaction({
      ...o.retirement.compaction,
      afterMs: o.retirement.retireAfterMs,
      content,
      copies,
      retirement,
      logger,
      now: o.context.now,
    })
  const readHeads = createHeadReader(routes, logger)
  const byName = new Map(routes.map((route) => [route.name as string, route]))
  const routeOf = (name: string) => byName.get(name)!
  const checks = createRetrievalChecks(
    { ...o.context, retrievalCheckMs: o.retrievalCheckMs, stopAfter: o.retrievalFailedChecks ?? DEFAULT_FAILED_CHECKS },
    routeOf,
  )
  const stopping = new AbortController()
  let running: Promise<TickReport> | undefined
  let timer: NodeJS.Timeout | undefined
  let interrupted: Promise<number> | undefined

  // Only groups whose CAR is on disk can be sent: ready_for_deals, or offloaded ones reloaded for repair; and
  // only while something in them lives.
  const sendable = (g: GroupRecord) => keepsCopies(g) && (g.state === 'ready_for_deals' || (g.state === 'reload' && repairs.holds(g.id)))

  async function tickOnce(): Promise<TickReport> {
    const r = emptyReport()
    if (o.paused?.()) return r
    // Proposals in flight when a previous process died, once, before anything else.
    await (interrupted ??= deals.failInterrupted().catch((err) => {
      interrupted = undefined
      throw err
    }))
    // Dead groups first: what is placed or repaired below leaves them out.
    await retirement?.run(r).catch((err) => logger.warn({ err }, 'retiring groups of deleted files failed; retrying next tick'))
    // Each route's chain, once a pass: its copies are judged at its own head.
    const heads = await readHeads()
    const ready = routes.filter((route) => heads.has(route.name))
    // A route that fails a step goes on at the next pass; the others go on now.
    for (const route of ready)
      await route
        .follow(heads.get(route.name)!, r)
        .catch((err) => logger.warn({ err, route: route.name }, 'following copies failed; retrying next tick'))
    await checks.run(r)
    const placing: StorageRoute[] = []
    for (const route of ready) {
      const placed = await route.place(heads.get(route.name)!, r, sendable).catch((err) => {
        logger.warn({ err, route: route.name }, 'placing copies failed; retrying next tick')
        return true
      })
      // A route that could not try (its deal service is down) gets no repair this pass: it could not make the copies.
      if (placed) placing.push(route)
    }
    // Repairs and offloads judge a group's copies on every route: they wait for a pass where every chain was read.
    if (ready.length < routes.length) return r
    await repairs.start(heads, r, placing)
    await repairs.finish(heads, r)
    await offloadGroups({ content, logger, copies }, heads, r)
    // Groups mostly dead: it judges the copies of the groups their live files went to, on every route.
    await compaction?.run(heads, r).catch((err) => logger.warn({ err }, 'compacting groups of deleted files failed; retrying next tick'))
    return r
  }

  const tick = (): Promise<TickReport> => (running ??= tickOnce().finally(() => (running = undefined)))

  return {
    routes: routes.map((route) => route.name),
    tick,
    remoteSource: (): RemoteSource => ({
      async sources(group) {
        const active = (await deals.liveOfGroup(group.id)).filter((d) => d.state === 'active')
        // Retrievable copies first, and of those warm ones: they are served at once, not unsealed from proofs.
        const warm = (d: (typeof active)[number]) => Number(routeOf(d.route).warm)
        active.sort((a, b) => Number(b.retrievable) - Number(a.retrievable) || warm(b) - warm(a))
        return active.map((d) => ({
          provider: d.provider,
          // Shutdown aborts reloads too, so that it never waits out a slow provider.
          fetch: () =>
            routeOf(d.route).retrievePiece(d, group.carSize!, AbortSignal.any([AbortSignal.timeout(o.reloadTimeoutMs), stopping.signal])),
          // One block of a file being read: a provider call like any other, cut short when the reader goes.
          block: (cid, signal) =>
            routeOf(d.route).retrieveBlock(d, cid, AbortSignal.any([signal, AbortSignal.timeout(o.callTimeoutMs), stopping.signal])),
        }))
      },
    }),
    async progress(groupId) {
      const all = await deals.ofGroup(groupId)
      const repair = repairs.phase(groupId)
      return { deals: all, routes: routes.map((route) => route.progress(groupId, all)), ...(repair ? { repair } : {}) }
    },
    standing: () => Object.assign({}, o.standing, ...routes.map((route) => route.standing())),
    start(intervalMs) {
      const loop = () => {
        tick()
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
      await compaction?.stop()
      for (const route of routes) await route.stop()
      await repairs.stop()
    },
  }
}
