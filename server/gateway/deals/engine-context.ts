import { EPOCH_SECONDS } from '../../shared/epochs.ts'
import type { DealEngineOptions, EngineContext, GroupDeal } from './types.ts'

/** The context the engine's phases share, from the engine's options. */
export function createEngineContext(o: DealEngineOptions): EngineContext {
  const { deals, logger } = o
  const endsSoon = (d: GroupDeal, head: number) => d.endEpoch - head <= o.renewBeforeEpochs
  return {
    o,
    now: o.now ?? Date.now,
    copies: o.copies ?? 3,
    retryAfterEpochs: Math.ceil(o.retryAfterMs / 1000 / EPOCH_SECONDS),
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
    counting: async (groupId, head) =>
      (await deals.liveOfGroup(groupId)).filter((d) => !endsSoon(d, head) && !(d.state === 'active' && d.checkedMs !== undefined && !d.retrievable)),
    lastingRetrievable: async (groupId, head) => (await deals.liveOfGroup(groupId)).filter((d) => d.state === 'active' && d.retrievable && !endsSoon(d, head)).length,
    transferPending: async (groupId) => (await deals.liveOfGroup(groupId)).some((d) => d.state === 'proposing' || d.state === 'proposed'),
  }
}
