import { failureText } from '../../shared/contracts/copy-failure.ts'
import type { Logger } from '../../shared/logger.ts'
import type { ContentStore } from '../content/index.ts'
import type { DealStore, RouteContext } from './types.ts'

/** The context every route is made with: the stores, the log, the clock, the call timeout and the retry wait. */
export function createRouteContext(o: {
  deals: DealStore
  content: ContentStore
  logger: Logger
  now?: () => number
  callTimeoutMs: number
  retryAfterEpochs: number
}): RouteContext {
  const { deals, logger } = o
  return {
    deals,
    content: o.content,
    logger,
    now: o.now ?? Date.now,
    retryAfterEpochs: o.retryAfterEpochs,
    withTimeout(run, timeoutMs = o.callTimeoutMs) {
      const controller = new AbortController()
      const timer = setTimeout(() => controller.abort(new Error('provider call timed out')), timeoutMs)
      return run(controller.signal).finally(() => clearTimeout(timer))
    },
    async fail(d, failure, r) {
      await deals.markFailed(d.id, failure)
      r.failed++
      logger.info({ groupId: d.groupId, provider: d.provider, reason: failureText(failure) }, 'deal failed; another provider will be asked')
    },
  }
}
