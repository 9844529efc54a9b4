import { EPOCH_SECONDS } from '../../shared/epochs.ts'
import type { DealEngineOptions, EngineContext, GroupDeal, StorageRoute } from './types.ts'

const ROUTES: readonly StorageRoute[] = ['market', 'pdp']

/** The context the engine's phases share, from the engine's options. */
export function createEngineContext(o: DealEngineOptions): EngineContext {
  const { deals, logger } = o
  // A PDP copy lasts while its payments are funded: that is the funds' runway to watch, not a copy to renew.
  const endsSoon = (d: GroupDeal, head: number) => d.route === 'market' && d.endEpoch - head <= o.renewBeforeEpochs
  const failingChecks = (d: GroupDeal) => d.state === 'active' && d.checkedMs !== undefined && !d.retrievable
  const liveOf = async (groupId: number, route: StorageRoute) => (await deals.liveOfGroup(groupId)).filter((d) => d.route === route)
  const c: EngineContext = {
    o,
    now: o.now ?? Date.now,
    copies: o.copies ?? 3,
    retryAfterEpochs: Math.ceil(o.retryAfterMs / 1000 / EPOCH_SECONDS),
    required: (route) => (route === 'market' ? c.copies : (o.pdp?.copies ?? 0)),
    uploading: () => false,
    withTimeout(run, timeoutMs = o.callTimeoutMs) {
      const controller = new AbortController()
      const timer = setTimeout(() => controller.abort(new Error('provider call timed out')), timeoutMs)
      return run(controller.signal).finally(() => clearTimeout(timer))
    },
    async fail(d, reason, r) {
      await deals.markFailed(d.id, reason)
      r.failed++
      logger.info({ groupId: d.groupId, provider: d.provider, reason }, 'deal failed; another provider will be asked')
    },
    counting: async (groupId, head, route = 'market') =>
      (await liveOf(groupId, route)).filter((d) => !endsSoon(d, head) && !failingChecks(d)),
    lastingRetrievable: async (groupId, head, route = 'market') =>
      (await liveOf(groupId, route)).filter((d) => d.state === 'active' && d.retrievable && !endsSoon(d, head)).length,
    async satisfied(groupId, head) {
      for (const route of ROUTES) if ((await c.lastingRetrievable(groupId, head, route)) < c.required(route)) return false
      return true
    },
    async short(groupId, head, routes = ROUTES) {
      for (const route of routes) if ((await c.counting(groupId, head, route)).length < c.required(route)) return true
      return false
    },
    transferPending: async (groupId) =>
      c.uploading(groupId) || (await deals.liveOfGroup(groupId)).some((d) => d.state === 'proposing' || d.state === 'proposed'),
    retrieveBlock: (d, cid, signal) =>
      d.route === 'pdp'
        ? o.pdp!.client.retrieveBlock(d.retrievalUrl!, cid, signal)
        : o.providers.retrieveBlock(d.provider, d.pieceCid, cid, { signal }),
    retrievePiece: (d, size, signal) =>
      d.route === 'pdp'
        ? o.pdp!.client.retrievePiece(d.retrievalUrl!, size, signal)
        : o.providers.retrievePiece(d.provider, d.pieceCid, size, { signal }),
  }
  return c
}
