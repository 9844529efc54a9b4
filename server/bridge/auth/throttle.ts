import { isIPv6 } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { migrateSql, type Sql } from '../../shared/sql/index.ts'

/**
 * Brute-force protection as Nextcloud does it: failed logins are counted per
 * client address (an IPv6 client by its /64, which one host usually holds
 * whole), never per user name, so nobody can lock another person out. Each
 * recorded failure makes the next attempt from that address wait longer
 * before its credentials are checked; past `maxFailures` the address gets
 * 429 until its oldest failure leaves the window. A success from an address
 * forgets that address's failures. Failures live in the bridge's store, so
 * on PostgreSQL every bridge replica counts the same ones.
 */
export interface LoginThrottle {
  /**
   * Call before checking credentials from `address`: waits the delay the
   * address's recent failures earned, then answers the seconds it must still
   * wait before trying again (0: go ahead).
   */
  admit(address: string, now?: number): Promise<number>
  recordFailure(address: string, now?: number): Promise<void>
  recordSuccess(address: string): Promise<void>
}

export interface ThrottleOptions {
  /** Failures allowed in the window before answering 429. */
  maxFailures?: number
  windowMs?: number
  /** Delay after the first failure; it doubles with each further one, up to `maxDelayMs`. */
  firstDelayMs?: number
  maxDelayMs?: number
}

const SCHEMA = [
  `CREATE TABLE login_failures (
     address_key TEXT NOT NULL,
     at_ms INTEGER NOT NULL
   );
   CREATE INDEX login_failures_address ON login_failures (address_key, at_ms);
   CREATE INDEX login_failures_age ON login_failures (at_ms);`,
]

// Addresses whose failures this replica saw in `admit`, so that a success costs a write only after failures.
const MAX_FAILING_KEYS = 10_000

export async function createLoginThrottle(sql: Sql, opts: ThrottleOptions = {}): Promise<LoginThrottle> {
  await migrateSql(sql, 'bridge.throttle', SCHEMA)
  const max = opts.maxFailures ?? 10
  const windowMs = opts.windowMs ?? 15 * 60_000
  const firstDelayMs = opts.firstDelayMs ?? 100
  const maxDelayMs = opts.maxDelayMs ?? 10_000
  const failing = new Set<string>()

  return {
    async admit(address, now = Date.now()) {
      const key = throttleKey(address)
      // The newest `max` failures in the window are all the decision needs.
      const recent = await sql.all<{ at_ms: number }>(
        'SELECT at_ms FROM login_failures WHERE address_key = ? AND at_ms > ? ORDER BY at_ms DESC LIMIT ?',
        [key, now - windowMs, max],
      )
      if (recent.length === 0) return 0
      if (failing.size >= MAX_FAILING_KEYS) failing.clear()
      failing.add(key)
      // The wait lasts until the oldest of them leaves the window.
      if (recent.length >= max) return Math.max(1, Math.ceil((recent[recent.length - 1].at_ms + windowMs - now) / 1000))
      const delay = Math.min(maxDelayMs, firstDelayMs * 2 ** (recent.length - 1))
      if (delay > 0) await sleep(delay)
      return 0
    },
    async recordFailure(address, now = Date.now()) {
      await sql.run('INSERT INTO login_failures (address_key, at_ms) VALUES (?, ?)', [throttleKey(address), now])
      // Failures older than the window no longer count anywhere: the table stays as small as the window.
      await sql.run('DELETE FROM login_failures WHERE at_ms <= ?', [now - windowMs])
    },
    async recordSuccess(address) {
      const key = throttleKey(address)
      if (!failing.delete(key)) return
      await sql.run('DELETE FROM login_failures WHERE address_key = ?', [key])
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
