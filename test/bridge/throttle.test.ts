import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createLoginThrottle, throttleKey, type ThrottleOptions } from '../../server/bridge/auth/throttle.ts'
import type { Sql } from '../../server/shared/sql/index.ts'
import { describeEachStore } from '../helpers/stores.ts'
import { createCredentialCache } from '../../server/bridge/auth/credential-cache.ts'

const T0 = 1_000_000

describeEachStore('login throttle', (open) => {
  const noDelay = { firstDelayMs: 0 }
  let sql: Sql
  beforeEach(async () => {
    sql = await open('bridge')
  })
  afterEach(() => sql.close())
  const throttle = (opts: ThrottleOptions) => createLoginThrottle(sql, opts)

  it('allows up to the limit from one address and then asks to wait until the window slides', async () => {
    const t = await throttle({ maxFailures: 3, windowMs: 60_000, ...noDelay })
    for (let i = 0; i < 3; i++) {
      expect(await t.admit('10.0.0.1', T0 + i)).toBe(0)
      await t.recordFailure('10.0.0.1', T0 + i * 1000)
    }
    // The oldest of the 3 failures (T0) leaves the window at T0 + 60 s.
    expect(await t.admit('10.0.0.1', T0 + 10_000)).toBe(50)
    expect(await t.admit('10.0.0.1', T0 + 60_001)).toBe(0)
  })

  it('never throttles one address for another address\'s failures', async () => {
    const t = await throttle({ maxFailures: 2, windowMs: 60_000, ...noDelay })
    await t.recordFailure('10.0.0.1', T0)
    await t.recordFailure('10.0.0.1', T0)
    expect(await t.admit('10.0.0.1', T0)).toBeGreaterThan(0)
    expect(await t.admit('10.0.0.2', T0)).toBe(0)
  })

  it('counts an IPv6 client by its /64, and an IPv4-mapped address as IPv4', async () => {
    const t = await throttle({ maxFailures: 2, windowMs: 60_000, ...noDelay })
    await t.recordFailure('2001:db8:1:2::1', T0)
    await t.recordFailure('2001:0db8:0001:0002:ffff:1:2:3', T0)
    expect(await t.admit('2001:db8:1:2:abcd::9', T0)).toBeGreaterThan(0)
    expect(await t.admit('2001:db8:1:3::1', T0)).toBe(0)
    await t.recordFailure('::ffff:192.0.2.7', T0)
    await t.recordFailure('192.0.2.7', T0)
    expect(await t.admit('192.0.2.7', T0)).toBeGreaterThan(0)
    expect(throttleKey('::1')).toBe('0:0:0:0::/64')
    expect(throttleKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64')
  })

  it('waits longer before each further attempt from a failing address, and not at all from a clean one', async () => {
    const t = await throttle({ maxFailures: 10, windowMs: 60_000, firstDelayMs: 150 })
    const timed = async (address: string) => {
      const started = performance.now()
      await t.admit(address)
      return performance.now() - started
    }
    // Wide margins: the delays are 0, 150 and 600 ms; a loaded CI machine only ever adds time.
    expect(await timed('10.0.0.1')).toBeLessThan(100)
    await t.recordFailure('10.0.0.1')
    expect(await timed('10.0.0.1')).toBeGreaterThanOrEqual(140)
    await t.recordFailure('10.0.0.1')
    await t.recordFailure('10.0.0.1')
    expect(await timed('10.0.0.1')).toBeGreaterThanOrEqual(590)
    expect(await timed('10.0.0.2')).toBeLessThan(100)
  })

  it('forgets an address\'s failures after a success from it', async () => {
    const t = await throttle({ maxFailures: 2, windowMs: 60_000, ...noDelay })
    await t.recordFailure('10.0.0.1', T0)
    await t.recordFailure('10.0.0.2', T0)
    await t.recordFailure('10.0.0.2', T0)
    // As in a request: admitted (seeing the failure), then the right password.
    expect(await t.admit('10.0.0.1', T0)).toBe(0)
    await t.recordSuccess('10.0.0.1')
    await t.recordFailure('10.0.0.1', T0)
    expect(await t.admit('10.0.0.1', T0)).toBe(0)
    // 10.0.0.2's two failures still count.
    expect(await t.admit('10.0.0.2', T0)).toBeGreaterThan(0)
  })

  it('counts failures across replicas sharing the store, and a success on one clears them for all', async () => {
    const [a, b] = [await throttle({ maxFailures: 2, windowMs: 60_000, ...noDelay }), await throttle({ maxFailures: 2, windowMs: 60_000, ...noDelay })]
    await a.recordFailure('10.0.0.1', T0)
    expect(await b.admit('10.0.0.1', T0)).toBe(0)
    await b.recordFailure('10.0.0.1', T0)
    expect(await a.admit('10.0.0.1', T0)).toBeGreaterThan(0)
    expect(await b.admit('10.0.0.1', T0)).toBeGreaterThan(0)
    expect(await a.admit('10.0.0.1', T0 + 60_001)).toBe(0)
    await b.recordSuccess('10.0.0.1')
    expect(await a.admit('10.0.0.1', T0)).toBe(0)
  })

  it('keeps only the failures of the current window, however many addresses fail', async () => {
    const t = await throttle({ maxFailures: 2, windowMs: 60_000, ...noDelay })
    for (let i = 0; i < 1000; i++) await t.recordFailure(`10.1.${i >> 8}.${i & 255}`, T0)
    await t.recordFailure('10.0.0.1', T0 + 61_000)
    await t.recordFailure('10.0.0.1', T0 + 61_000)
    // The newest addresses still count; the old spray is gone from the store.
    expect(await t.admit('10.0.0.1', T0 + 61_000)).toBeGreaterThan(0)
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
