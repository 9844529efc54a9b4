import { randomUUID } from 'node:crypto'
import { isIPv6 } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { isDiskFull } from '../../shared/disk.ts'
import { lockUntilCommit, migrateSql, type Sql } from '../../shared/sql/index.ts'

/**
 * Brute-force protection as Nextcloud does it: failed logins are counted per
 * client address (an IPv6 client by its /64, which one host usually holds
 * whole), never per user name, so nobody can lock another person out. Each
 * recorded failure makes the next attempt from that address wait longer
 * before its credentials are checked; past `maxFailures` the address gets
 * 429 until its oldest failure leaves the window.
 *
 * Each attempt is reserved before its credentials are checked, in one
 * transaction (on PostgreSQL under a lock per address, so every bridge
 * replica sees it): an attempt still being checked counts as a failure, and
 * 300 guesses sent at once get no more checks than 300 sent one by one.
 *
 * A success forgets only the failures that named the user who logged in
 * (Nextcloud's `Throttler::resetDelay` with the user in its metadata):
 * logging into one's own account does not wipe the guesses at another's.
 */
export interface LoginThrottle {
  /** Seconds `address` must wait before it may try again (0: it may). Reads only. */
  retryAfter(address: string, now?: number): Promise<number>
  /**
   * One attempt at `login` from `address`: reserves it, waits the delay the
   * address's earlier failures earned, then runs `verify`. Undefined from
   * `verify` is a failure and stays counted; a value clears the failures
   * that named `login`; a throw (the checker could not answer) counts nothing.
   * Answers `{ retryAfter }` without running `verify` when the address is over its limit.
   */
  attempt<T>(address: string, login: string, verify: () => Promise<T | undefined>, now?: number): Promise<Attempt<T>>
}

export type Attempt<T> = { retryAfter: number } | { retryAfter: 0; value: T | undefined }

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
  // Who was tried (a success clears only those), and which attempt reserved the row (a success removes its own).
  `ALTER TABLE login_failures ADD COLUMN login_key TEXT NOT NULL DEFAULT '';
   ALTER TABLE login_failures ADD COLUMN attempt_id TEXT;`,
]

interface Reserved {
  at: number
  login: string
  id: string
}

/** How long "this address may log in" is believed without asking the store again. */
const CLEAR_ANSWER_MS = 1000
const MAX_CLEAR_ANSWERS = 10_000

export async function createLoginThrottle(sql: Sql, opts: ThrottleOptions = {}): Promise<LoginThrottle> {
  await migrateSql(sql, 'bridge.throttle', SCHEMA)
  const max = opts.maxFailures ?? 10
  const windowMs = opts.windowMs ?? 15 * 60_000
  const firstDelayMs = opts.firstDelayMs ?? 100
  const maxDelayMs = opts.maxDelayMs ?? 10_000
  // Attempts whose row could not be written (a full disk): still counted, by this replica, for the window.
  const unwritten = new Map<string, Reserved[]>()
  // Successes whose row could not be removed (a full disk): not counted, by this replica.
  const forgiven = new Set<string>()
  // Addresses found under their limit, and until when that answer stands without asking SQL again: every
  // request with known credentials asks, and the answer changes only with a failure. This replica's own
  // attempts drop the entry at once; another replica's show within CLEAR_ANSWER_MS.
  const clearUntil = new Map<string, number>()

  const inMemory = (key: string, now: number): number[] => {
    const list = (unwritten.get(key) ?? []).filter((r) => r.at > now - windowMs)
    if (list.length === 0) unwritten.delete(key)
    else unwritten.set(key, list)
    return list.map((r) => r.at)
  }
  /** The newest `max` failures in the window, newest first: all a decision needs. */
  const recentFailures = async (db: Sql, key: string, now: number): Promise<number[]> => {
    const rows = await db.all<{ at_ms: number; attempt_id: string | null }>(
      'SELECT at_ms, attempt_id FROM login_failures WHERE address_key = ? AND at_ms > ? ORDER BY at_ms DESC LIMIT ?',
      [key, now - windowMs, max + forgiven.size],
    )
    const stored = rows.filter((row) => row.attempt_id === null || !forgiven.has(row.attempt_id)).map((row) => Number(row.at_ms))
    const memory = inMemory(key, now)
    const all = memory.length === 0 ? stored : [...stored, ...memory].sort((a, b) => b - a)
    return all.slice(0, max)
  }
  // The wait lasts until the oldest of them leaves the window.
  const waitFor = (recent: number[], now: number) =>
    recent.length < max ? 0 : Math.max(1, Math.ceil((recent[recent.length - 1] + windowMs - now) / 1000))

  const reserve = (key: string, r: Reserved) =>
    sql.transaction(async (tx) => {
      await lockUntilCommit(tx, `login ${key}`)
      const recent = await recentFailures(tx, key, r.at)
      const wait = waitFor(recent, r.at)
      if (wait === 0)
        await tx.run('INSERT INTO login_failures (address_key, at_ms, login_key, attempt_id) VALUES (?, ?, ?, ?)', [
          key,
          r.at,
          r.login,
          r.id,
        ])
      return { wait, earlier: recent.length }
    })

  return {
    async retryAfter(address, now = Date.now()) {
      const key = throttleKey(address)
      if ((clearUntil.get(key) ?? 0) > now) return 0
      const wait = waitFor(await recentFailures(sql, key, now), now)
      if (wait === 0) {
        if (clearUntil.size >= MAX_CLEAR_ANSWERS) clearUntil.clear()
        clearUntil.set(key, now + CLEAR_ANSWER_MS)
      }
      return wait
    },
    async attempt<T>(address: string, login: string, verify: () => Promise<T | undefined>, now = Date.now()): Promise<Attempt<T>> {
      const key = throttleKey(address)
      clearUntil.delete(key)
      const r: Reserved = { at: now, login: login.toLowerCase(), id: randomUUID() }
      let reserved: { wait: number; earlier: number }
      try {
        reserved = await reserve(key, r)
      } catch (err) {
        if (!isDiskFull(err)) throw err
        // Nothing may be written: count this attempt here rather than refuse a login that needs no write.
        const recent = await recentFailures(sql, key, now)
        reserved = { wait: waitFor(recent, now), earlier: recent.length }
        if (reserved.wait === 0) unwritten.set(key, [...(unwritten.get(key) ?? []), r])
      }
      if (reserved.wait > 0) return { retryAfter: reserved.wait }
      if (reserved.earlier > 0) await sleep(Math.min(maxDelayMs, firstDelayMs * 2 ** (reserved.earlier - 1)))
      let value: T | undefined
      try {
        value = await verify()
      } catch (err) {
        await forget(key, (row) => row.id === r.id, 'attempt_id = ?', [r.id], r.id)
        throw err
      }
      if (value === undefined) {
        // Failures older than the window no longer count anywhere: the table stays as small as the window.
        await sql.run('DELETE FROM login_failures WHERE at_ms <= ?', [now - windowMs]).catch(() => undefined)
      } else {
        await forget(key, (row) => row.id === r.id || row.login === r.login, '(attempt_id = ? OR login_key = ?)', [r.id, r.login], r.id)
      }
      return { retryAfter: 0, value }
    },
  }

  /** Removes reservations of `key` matching both the stored condition and `matches` for unwritten ones. */
  async function forget(
    key: string,
    matches: (r: Reserved) => boolean,
    condition: string,
    params: unknown[],
    ownId: string,
  ): Promise<void> {
    const list = unwritten.get(key)
    if (list)
      unwritten.set(
        key,
        list.filter((row) => !matches(row)),
      )
    try {
      await sql.run(`DELETE FROM login_failures WHERE address_key = ? AND ${condition}`, [key, ...params])
    } catch (err) {
      // A full disk keeps the rows: this replica stops counting its own attempt; older failures still count.
      if (!isDiskFull(err)) throw err
      if (forgiven.size >= 10_000) forgiven.clear()
      forgiven.add(ownId)
    }
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
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`
}
