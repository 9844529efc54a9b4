import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createLoginThrottle, throttleKey, type LoginThrottle, type ThrottleOptions } from '../../server/bridge/auth/throttle.ts'
import { openSql, type Sql, type StoreLocation } from '../../server/shared/sql/index.ts'
import { describeEachStore } from '../helpers/stores.ts'
import { createCredentialCache } from '../../server/bridge/auth/credential-cache.ts'

const T0 = 1_000_000

describeEachStore('login throttle', ({ dialect, location }) => {
  const noDelay = { firstDelayMs: 0 }
  let sql: Sql
  const others: Sql[] = []
  let where: StoreLocation
  beforeEach(async () => {
    where = location('bridge')
    sql = await openSql(where)
  })
  afterEach(async () => {
    await sql.close()
    for (const s of others.splice(0)) await s.close()
  })
  const throttle = (opts: ThrottleOptions) => createLoginThrottle(sql, opts)
  /** Another bridge replica: its own connection to the same store. */
  const replica = async (opts: ThrottleOptions) => {
    const other = await openSql(where)
    others.push(other)
    return createLoginThrottle(other, opts)
  }
  const wrong = async () => undefined
  const right = async () => 'user'
  const fail = (t: LoginThrottle, address: string, now?: number, login = 'bob') => t.attempt(address, login, wrong, now)

  it('believes "this address may log in" for a second: its own failures end that at once, another replica\'s within the second', async () => {
    const opts = { maxFailures: 2, windowMs: 60_000, ...noDelay }
    const here = await throttle(opts)
    const there = await replica(opts)
    expect(await here.retryAfter('10.0.0.9', T0)).toBe(0)
    await fail(there, '10.0.0.9', T0 + 100)
    await fail(there, '10.0.0.9', T0 + 200)
    expect(await there.retryAfter('10.0.0.9', T0 + 300)).toBeGreaterThan(0)
    // Known credentials from this address still pass here until the answer is a second old.
    expect(await here.retryAfter('10.0.0.9', T0 + 900)).toBe(0)
    expect(await here.retryAfter('10.0.0.9', T0 + 1001)).toBeGreaterThan(0)

    expect(await here.retryAfter('10.0.0.10', T0)).toBe(0)
    await fail(here, '10.0.0.10', T0 + 1)
    await fail(here, '10.0.0.10', T0 + 2)
    expect(await here.retryAfter('10.0.0.10', T0 + 3)).toBeGreaterThan(0)
  })

  it('allows up to the limit from one address and then asks to wait until the window slides', async () => {
    const t = await throttle({ maxFailures: 3, windowMs: 60_000, ...noDelay })
    for (let i = 0; i < 3; i++) expect(await fail(t, '10.0.0.1', T0 + i * 1000)).toEqual({ retryAfter: 0, value: undefined })
    // The oldest of the 3 failures (T0) leaves the window at T0 + 60 s.
    expect(await t.retryAfter('10.0.0.1', T0 + 10_000)).toBe(50)
    expect(await t.attempt('10.0.0.1', 'bob', right, T0 + 10_000)).toEqual({ retryAfter: 50 })
    expect(await t.retryAfter('10.0.0.1', T0 + 60_001)).toBe(0)
  })

  it("never throttles one address for another address's failures", async () => {
    const t = await throttle({ maxFailures: 2, windowMs: 60_000, ...noDelay })
    await fail(t, '10.0.0.1', T0)
    await fail(t, '10.0.0.1', T0)
    expect(await t.retryAfter('10.0.0.1', T0)).toBeGreaterThan(0)
    expect(await t.retryAfter('10.0.0.2', T0)).toBe(0)
  })

  it('counts an IPv6 client by its /64, and an IPv4-mapped address as IPv4', async () => {
    const t = await throttle({ maxFailures: 2, windowMs: 60_000, ...noDelay })
    await fail(t, '2001:db8:1:2::1', T0)
    await fail(t, '2001:0db8:0001:0002:ffff:1:2:3', T0)
    expect(await t.retryAfter('2001:db8:1:2:abcd::9', T0)).toBeGreaterThan(0)
    expect(await t.retryAfter('2001:db8:1:3::1', T0)).toBe(0)
    await fail(t, '::ffff:192.0.2.7', T0)
    await fail(t, '192.0.2.7', T0)
    expect(await t.retryAfter('192.0.2.7', T0)).toBeGreaterThan(0)
    expect(throttleKey('::1')).toBe('0:0:0:0::/64')
    expect(throttleKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64')
  })

  it('waits longer before each further attempt from a failing address, and not at all from a clean one', async () => {
    const t = await throttle({ maxFailures: 10, windowMs: 60_000, firstDelayMs: 150 })
    const timed = async (address: string) => {
      const started = performance.now()
      await fail(t, address)
      return performance.now() - started
    }
    // Wide margins: the delays are 0, 150 and 600 ms; a loaded CI machine only ever adds time.
    expect(await timed('10.0.0.1')).toBeLessThan(100)
    expect(await timed('10.0.0.1')).toBeGreaterThanOrEqual(140)
    await fail(t, '10.0.0.1')
    expect(await timed('10.0.0.1')).toBeGreaterThanOrEqual(590)
    expect(await timed('10.0.0.2')).toBeLessThan(100)
  })

  it('checks no more guesses sent all at once than one by one', async () => {
    const t = await throttle({ maxFailures: 10, windowMs: 60_000, ...noDelay })
    let checked = 0
    const results = await Promise.all(
      Array.from({ length: 300 }, () =>
        t.attempt(
          '10.0.0.1',
          'admin',
          async () => {
            checked++
            // The check takes a while (scrypt, Nextcloud): every guess is in flight at once.
            await new Promise((resolve) => setTimeout(resolve, 20))
            return undefined
          },
          T0,
        ),
      ),
    )
    expect(checked).toBe(10)
    expect(results.filter((r) => r.retryAfter > 0)).toHaveLength(290)
  })

  // Replicas share PostgreSQL only: a SQLite file belongs to one process.
  it.skipIf(dialect === 'sqlite')('lets no more guesses through two replicas at once than through one', async () => {
    const opts = { maxFailures: 10, windowMs: 60_000, ...noDelay }
    const [a, b] = [await throttle(opts), await replica(opts)]
    let checked = 0
    const guess = async () => {
      checked++
      await new Promise((resolve) => setTimeout(resolve, 20))
      return undefined
    }
    await Promise.all(Array.from({ length: 150 }, (_, i) => (i % 2 ? a : b).attempt('10.0.0.1', 'admin', guess, T0)))
    expect(checked).toBe(10)
  })

  it('a success forgets only the failures that named the user who logged in', async () => {
    const t = await throttle({ maxFailures: 4, windowMs: 60_000, ...noDelay })
    await fail(t, '10.0.0.1', T0, 'admin')
    await fail(t, '10.0.0.1', T0, 'admin')
    await fail(t, '10.0.0.1', T0, 'Mallory')
    // Mallory logs into her own account in between: her typo is forgiven, the guesses at admin are not.
    expect(await t.attempt('10.0.0.1', 'mallory', right, T0)).toEqual({ retryAfter: 0, value: 'user' })
    await fail(t, '10.0.0.1', T0, 'admin')
    await fail(t, '10.0.0.1', T0, 'admin')
    expect(await t.attempt('10.0.0.1', 'admin', right, T0)).toEqual({ retryAfter: 60 })
    // admin, from another address, is not locked out.
    expect(await t.attempt('10.0.0.2', 'admin', right, T0)).toEqual({ retryAfter: 0, value: 'user' })
  })

  it('counts nothing when the credentials could not be checked', async () => {
    const t = await throttle({ maxFailures: 1, windowMs: 60_000, ...noDelay })
    await expect(
      t.attempt(
        '10.0.0.1',
        'bob',
        async () => {
          throw new Error('Nextcloud is down')
        },
        T0,
      ),
    ).rejects.toThrow('Nextcloud is down')
    expect(await t.retryAfter('10.0.0.1', T0)).toBe(0)
  })

  it('counts failures across replicas sharing the store, and a success on one clears them for all', async () => {
    const opts = { maxFailures: 2, windowMs: 60_000, ...noDelay }
    const [a, b] = [await throttle(opts), await replica(opts)]
    await fail(a, '10.0.0.1', T0)
    expect(await b.retryAfter('10.0.0.1', T0)).toBe(0)
    await fail(b, '10.0.0.1', T0 + 1)
    expect(await a.retryAfter('10.0.0.1', T0)).toBeGreaterThan(0)
    expect(await b.retryAfter('10.0.0.1', T0)).toBeGreaterThan(0)
    expect(await a.retryAfter('10.0.0.1', T0 + 60_002)).toBe(0)
    // One failure left in the window at T0 + 60 001: room for one attempt, which succeeds.
    expect(await b.attempt('10.0.0.1', 'bob', right, T0 + 60_001)).toEqual({ retryAfter: 0, value: 'user' })
    expect(await sql.get('SELECT count(*) AS n FROM login_failures WHERE at_ms > ?', [T0 + 1])).toEqual({ n: 0 })
  })

  it('keeps only the failures of the current window, however many addresses fail', async () => {
    const t = await throttle({ maxFailures: 2, windowMs: 60_000, ...noDelay })
    for (let i = 0; i < 1000; i++) await fail(t, `10.1.${i >> 8}.${i & 255}`, T0)
    await fail(t, '10.0.0.1', T0 + 61_000)
    await fail(t, '10.0.0.1', T0 + 61_000)
    // The newest addresses still count; the old spray is gone from the store.
    expect(await t.retryAfter('10.0.0.1', T0 + 61_000)).toBeGreaterThan(0)
    expect(await sql.get('SELECT count(*) AS n FROM login_failures')).toEqual({ n: 2 })
  })
})

describe('credential cache', () => {
  it('remembers a success for its lifetime, keyed by login and secret', () => {
    const c = createCredentialCache<string>({ ttlMs: 1000 })
    c.set('alice', 'pw', 'alice', T0)
    expect(c.get('alice', 'pw', T0 + 500)).toBe('alice')
    expect(c.get('alice', 'other', T0 + 500)).toBeUndefined()
    expect(c.get('alice', 'pw', T0 + 1000)).toBeUndefined()
  })

  it('verifies once for concurrent requests and never caches a failure', async () => {
    const c = createCredentialCache<string>()
    let calls = 0
    const verify = async () => {
      calls++
      return undefined
    }
    await Promise.all([c.getOrVerify('a', 'b', verify), c.getOrVerify('a', 'b', verify)])
    expect(calls).toBe(1)
    await c.getOrVerify('a', 'b', verify)
    expect(calls).toBe(2)
    await c.getOrVerify('a', 'c', async () => 'a')
    expect(await c.getOrVerify('a', 'c', async () => undefined)).toBe('a')
  })
})
