import { isIPv6 } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'

/**
 * Brute-force protection as Nextcloud does it: failed logins are counted per
 * client address (an IPv6 client by its /64, which one host usually holds
 * whole), never per user name, so nobody can lock another person out. Each
 * recorded failure makes the next attempt from that address wait longer
 * before its credentials are checked; past `maxFailures` the address gets
 * 429 until its oldest failure leaves the window. A success from an address
 * forgets that address's failures.
 */
export interface LoginThrottle {
  /**
   * Call before checking credentials from `address`: waits the delay the
   * address's recent failures earned, then answers the seconds it must still
   * wait before trying again (0: go ahead).
   */
  admit(address: string, now?: number): Promise<number>
  recordFailure(address: string, now?: number): void
  recordSuccess(address: string): void
}

export interface ThrottleOptions {
  /** Failures allowed in the window before answering 429. */
  maxFailures?: number
  windowMs?: number
  /** Delay after the first failure; it doubles with each further one, up to `maxDelayMs`. */
  firstDelayMs?: number
  maxDelayMs?: number
  /** Bounds memory under a spray from many addresses. */
  maxKeys?: number
}

export function createLoginThrottle(opts: ThrottleOptions = {}): LoginThrottle {
  const max = opts.maxFailures ?? 10
  const windowMs = opts.windowMs ?? 15 * 60_000
  const firstDelayMs = opts.firstDelayMs ?? 100
  const maxDelayMs = opts.maxDelayMs ?? 10_000
  const maxKeys = opts.maxKeys ?? 100_000
  /** Failure times per address key, oldest first. */
  const failures = new Map<string, number[]>()

  const live = (key: string, now: number): number[] => {
    const list = failures.get(key)
    if (!list) return []
    const kept = list.filter((at) => now - at < windowMs)
    if (kept.length === 0) failures.delete(key)
    else if (kept.length !== list.length) failures.set(key, kept)
    return kept
  }

  return {
    async admit(address, now = Date.now()) {
      const list = live(throttleKey(address), now)
      if (list.length === 0) return 0
      // The wait lasts until enough of the oldest failures leave the window.
      if (list.length >= max) return Math.max(1, Math.ceil((list[list.length - max] + windowMs - now) / 1000))
      const delay = Math.min(maxDelayMs, firstDelayMs * 2 ** (list.length - 1))
      if (delay > 0) await sleep(delay)
      return 0
    },
    recordFailure(address, now = Date.now()) {
      const key = throttleKey(address)
      const list = live(key, now)
      list.push(now)
      // Only the newest `max` failures matter for the decision.
      failures.set(key, list.length > max ? list.slice(-max) : list)
      if (failures.size > maxKeys) {
        for (const k of [...failures.keys()]) live(k, now)
        // Still too many: drop the oldest keys (a Map keeps insertion order).
        for (const k of failures.keys()) {
          if (failures.size <= maxKeys) break
          failures.delete(k)
        }
      }
    },
    recordSuccess(address) {
      failures.delete(throttleKey(address))
    },
  }
}

/** The address an attempt is counted against: an IPv4 address whole, an IPv6 address by its /64. */
export function throttleKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped) return mapped[1]
  if (!isIPv6(address)) return address
  const [head, tail = ''] = address.replace(/%.*$/, '').toLowerCase().split('::')
  const left = head ? head.split(':') : []
  const right = tail ? tail.split(':') : []
  const groups = address.includes('::') ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right] : left
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '')).join(':')}::/64`
}
