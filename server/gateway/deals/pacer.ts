import { EPOCH_SECONDS } from '../../shared/epochs.ts'

/**
 * When each of a set of things (a copy to ask about, a removal to try) is
 * next due, on the wall clock: `everyMs` after it was last done, or, after
 * failures, `backoff.firstMs` doubling up to `backoff.maxMs`.
 */
export interface Pacer<K> {
  /** Whether it is due now (never done: due). */
  due(key: K): boolean
  /** When it is next due (undefined: never done, or due at once). */
  at(key: K): number | undefined
  /** Done now: due again after `everyMs`; its failures are forgotten. */
  done(key: K): void
  /** Failed now (or at `atMs`): due again after the back-off; returns how many times in a row it failed. */
  failed(key: K, atMs?: number): number
  /** Due now, once (a removal found after a start). */
  schedule(key: K): void
  has(key: K): boolean
  keys(): K[]
  forget(key: K): void
  /** Drops what is paced for keys no longer asked about. */
  keepOnly(keys: ReadonlySet<K>): void
}

export function createPacer<K>(o: { now: () => number; everyMs: number; backoff?: { firstMs: number; maxMs: number } }): Pacer<K> {
  const next = new Map<K, { atMs: number; failures: number }>()
  return {
    due: (key) => (next.get(key)?.atMs ?? -Infinity) <= o.now(),
    at: (key) => {
      const atMs = next.get(key)?.atMs
      return atMs === undefined || atMs === -Infinity ? undefined : atMs
    },
    done: (key) => void next.set(key, { atMs: o.now() + o.everyMs, failures: 0 }),
    failed(key, atMs = o.now()) {
      const failures = (next.get(key)?.failures ?? 0) + 1
      const { firstMs, maxMs } = o.backoff ?? { firstMs: o.everyMs, maxMs: o.everyMs }
      next.set(key, { atMs: atMs + Math.min(maxMs, firstMs * 2 ** (failures - 1)), failures })
      return failures
    },
    schedule: (key) => void next.set(key, { atMs: -Infinity, failures: next.get(key)?.failures ?? 0 }),
    has: (key) => next.has(key),
    keys: () => [...next.keys()],
    forget: (key) => void next.delete(key),
    keepOnly(keys) {
      for (const key of next.keys()) if (!keys.has(key)) next.delete(key)
    },
  }
}

/**
 * `ms` of chain time in wall-clock milliseconds on a network whose epochs
 * last `epochSeconds`: a sped-up simulated network asks as often per epoch
 * as a real one.
 */
export const inChainTime = (ms: number, epochSeconds: number) => (ms * epochSeconds) / EPOCH_SECONDS
