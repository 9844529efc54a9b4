import { EPOCH_SECONDS } from '../../shared/epochs.ts'
import type { DealEngineOptions, TickReport } from './deal-engine.ts'
import type { GroupDeal } from './deal-store.ts'

/**
 * What every phase of the deal engine shares: its options, the copies a group
 * needs right now, and the few rules about which deals count. One per engine.
 */
export interface EngineContext {
  o: DealEngineOptions
  now: () => number
  /** Copies required per group: DEAL_COPIES, else the tenant's policy as last read. */
  copies: number
  retryAfterEpochs: number
  /** Runs a provider call under the call timeout (or `timeoutMs`). */
  withTimeout<T>(run: (signal: AbortSignal) => Promise<T>, timeoutMs?: number): Promise<T>
  /** Marks a deal failed (another provider will be asked) and counts it. */
  fail(d: GroupDeal, reason: string, r: TickReport): Promise<void>
  /**
   * Live deals that hold (or will soon hold) the group's data for a while:
   * not about to end, and not an active deal whose last retrieval check failed
   * (the provider lost or altered the data). Fewer than `copies`: repair.
   */
  counting(groupId: number, head: number): Promise<GroupDeal[]>
  /** Copies that can be retrieved now and will last: what offload (and the end of a repair) waits for. */
  lastingRetrievable(groupId: number, head: number): Promise<number>
  /** Whether a provider may still be fetching the group's CAR. */
  transferPending(groupId: number): Promise<boolean>
}

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
