import { describe, expect, it } from 'vitest'
import { createLoginThrottle } from '../../server/bridge/auth/throttle.ts'
import { createCredentialCache } from '../../server/bridge/auth/credential-cache.ts'

const T0 = 1_000_000

describe('login throttle', () => {
  it('allows up to the limit and then asks to wait until the window slides', () => {
    const t = createLoginThrottle({ maxFailures: 3, windowMs: 60_000 })
    for (let i = 0; i < 3; i++) {
      expect(t.retryAfter('alice', '10.0.0.1', T0 + i)).toBe(0)
      t.recordFailure('alice', '10.0.0.1', T0 + i * 1000)
    }
    // The oldest of the 3 failures (T0) leaves the window at T0 + 60 s.
    expect(t.retryAfter('alice', '10.0.0.1', T0 + 10_000)).toBe(50)
    expect(t.retryAfter('alice', '10.0.0.1', T0 + 60_001)).toBe(0)
  })

  it('throttles a user from every address and an address for every user', () => {
    const t = createLoginThrottle({ maxFailures: 2, windowMs: 60_000 })
    t.recordFailure('alice', '10.0.0.1', T0)
    t.recordFailure('alice', '10.0.0.2', T0)
    expect(t.retryAfter('alice', '10.0.0.3', T0)).toBeGreaterThan(0)
    expect(t.retryAfter('bob', '10.0.0.3', T0)).toBe(0)

    t.recordFailure('carol', '10.0.0.9', T0)
    t.recordFailure('dave', '10.0.0.9', T0)
    expect(t.retryAfter('erin', '10.0.0.9', T0)).toBeGreaterThan(0)
  })

  it('forgets on success only the failures of that user from that address', () => {
    const t = createLoginThrottle({ maxFailures: 2, windowMs: 60_000 })
    t.recordFailure('alice', '10.0.0.1', T0)
    t.recordFailure('alice', '10.0.0.2', T0)
    t.recordFailure('alice', '10.0.0.2', T0)
    t.recordSuccess('alice', '10.0.0.1')
    // 10.0.0.2's two failures still count.
    expect(t.retryAfter('bob', '10.0.0.2', T0)).toBeGreaterThan(0)
    expect(t.retryAfter('alice', '10.0.0.1', T0)).toBeGreaterThan(0)
  })

  it('does not let a success for one user clear an address spraying others', () => {
    const t = createLoginThrottle({ maxFailures: 2, windowMs: 60_000 })
    t.recordFailure('bob', '10.0.0.5', T0)
    t.recordFailure('carol', '10.0.0.5', T0)
    t.recordSuccess('mallory', '10.0.0.5')
    expect(t.retryAfter('mallory', '10.0.0.5', T0)).toBeGreaterThan(0)
  })

  it('bounds its memory', () => {
    const t = createLoginThrottle({ maxFailures: 2, windowMs: 60_000, maxKeys: 100 })
    for (let i = 0; i < 1000; i++) t.recordFailure(`user${i}`, '10.0.0.1', T0)
    // The address still counts every failure.
    expect(t.retryAfter('anyone', '10.0.0.1', T0)).toBeGreaterThan(0)
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
