import type { Logger } from '../../shared/logger.ts'

/** Points where crash tests SIGKILL the gateway: mid CAR writing, mid offload, mid reload. */
export const PAUSE_POINTS = ['car-writing', 'offload', 'reload'] as const
export type PausePoint = (typeof PAUSE_POINTS)[number]

/** Awaited at each pause point; resolves at once unless a test asked to stop there. */
export type PauseHook = (point: PausePoint, context?: Record<string, unknown>) => Promise<void>

export const noPause: PauseHook = async () => {}

/**
 * Test-only (GATEWAY_TEST_PAUSE_AT): at `at` the gateway logs
 * "test pause point reached" and waits forever, so a crash test kills it
 * exactly there instead of guessing with timers. Never set in production.
 */
export function testPauseHook(at: PausePoint | undefined, logger: Logger): PauseHook {
  if (!at) return noPause
  return (point, context) => {
    if (point !== at) return Promise.resolve()
    logger.warn({ pausePoint: point, ...context }, 'test pause point reached: waiting to be killed')
    return new Promise<void>(() => {})
  }
}
