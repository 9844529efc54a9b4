/**
 * Counts failed logins per user and per client address in a sliding window.
 * Only failures are recorded; a success forgets the failures of that same
 * user from that same address, never another address's.
 */
export interface LoginThrottle {
  /** Seconds to wait when either the user or the address is over the limit; 0 when allowed. */
  retryAfter(user: string, address: string, now?: number): number
  recordFailure(user: string, address: string, now?: number): void
  recordSuccess(user: string, address: string): void
}

export interface ThrottleOptions {
  /** Failures allowed in the window before answering 429. */
  maxFailures?: number
  windowMs?: number
  /** Bounds memory under a spray of random user names. */
  maxKeys?: number
}

interface Failure { at: number; user: string; address: string }

export function createLoginThrottle(opts: ThrottleOptions = {}): LoginThrottle {
  const max = opts.maxFailures ?? 10
  const windowMs = opts.windowMs ?? 5 * 60_000
  const maxKeys = opts.maxKeys ?? 100_000
  const byUser = new Map<string, Failure[]>()
  const byAddress = new Map<string, Failure[]>()

  const live = (map: Map<string, Failure[]>, key: string, now: number): Failure[] => {
    const list = map.get(key)
    if (!list) return []
    const kept = list.filter((f) => now - f.at < windowMs)
    if (kept.length === 0) map.delete(key)
    else if (kept.length !== list.length) map.set(key, kept)
    return kept
  }
  // The wait lasts until enough of the oldest failures leave the window.
  const waitFor = (list: Failure[], now: number) =>
    list.length < max ? 0 : Math.max(1, Math.ceil((list[list.length - max].at + windowMs - now) / 1000))

  const push = (map: Map<string, Failure[]>, key: string, f: Failure, now: number) => {
    const list = live(map, key, now)
    list.push(f)
    // Only the newest `max` failures matter for the decision.
    map.set(key, list.length > max ? list.slice(-max) : list)
    if (map.size > maxKeys) sweep(map, now)
  }
  const sweep = (map: Map<string, Failure[]>, now: number) => {
    for (const key of [...map.keys()]) live(map, key, now)
    // Still too many: drop the oldest keys (Map keeps insertion order).
    for (const key of map.keys()) {
      if (map.size <= maxKeys) break
      map.delete(key)
    }
  }

  return {
    retryAfter(user, address, now = Date.now()) {
      return Math.max(waitFor(live(byUser, user, now), now), waitFor(live(byAddress, address, now), now))
    },
    recordFailure(user, address, now = Date.now()) {
      const f = { at: now, user, address }
      push(byUser, user, f, now)
      push(byAddress, address, f, now)
    },
    recordSuccess(user, address) {
      const forget = (map: Map<string, Failure[]>, key: string) => {
        const list = map.get(key)
        if (!list) return
        const kept = list.filter((f) => !(f.user === user && f.address === address))
        if (kept.length === 0) map.delete(key)
        else map.set(key, kept)
      }
      forget(byUser, user)
      forget(byAddress, address)
    },
  }
}
