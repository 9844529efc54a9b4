import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ALICE, BOB, basic, postMetadata, startBridgeOnRealGateway } from './helpers.ts'

/**
 * Nextcloud's brute-force protection counts failures per client address,
 * never per user name: a stranger who guesses at bob's password slows down
 * only themselves. The bridge trusts loopback as its proxy here, so each
 * request can name the client address it comes from.
 */
describe('failed-login throttle, on every way in', () => {
  let t: Awaited<ReturnType<typeof startBridgeOnRealGateway>>
  let appPassword: string
  const ATTACKER = '203.0.113.7'
  const BOB_AT_HOME = '198.51.100.20'
  beforeAll(async () => {
    t = await startBridgeOnRealGateway({ trustProxy: 'loopback' }, { throttle: { maxFailures: 10, windowMs: 60_000, firstDelayMs: 1 } })
    appPassword = (await t.bridge.users.createAppPassword(BOB.user, 'desktop')).token
  })
  afterAll(() => t.close())

  const from = (address: string) => ({ 'x-forwarded-for': address })
  const propfind = (auth: string, address: string) =>
    fetch(`${t.url}/remote.php/dav/files/${BOB.user}/`, {
      method: 'PROPFIND',
      headers: { authorization: auth, depth: '0', ...from(address) },
    })
  const formLogin = (password: string, address: string, user = BOB.user) =>
    fetch(`${t.url}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...from(address) },
      body: new URLSearchParams({ user, password }).toString(),
    })

  it('ten wrong passwords for bob from one address leave bob free everywhere else', async () => {
    for (let i = 0; i < 10; i++) expect((await propfind(basic(BOB.user, `guess-${i}`), ATTACKER)).status).toBe(401)
    expect((await propfind(basic(BOB.user, BOB.password), ATTACKER)).status).toBe(429)

    expect((await propfind(basic(BOB.user, BOB.password), BOB_AT_HOME)).status).toBe(207)
    expect((await propfind(basic(BOB.user, appPassword), BOB_AT_HOME)).status).toBe(207)
    expect(
      (await postMetadata({ url: t.url, auth: basic(BOB.user, BOB.password), headers: from(BOB_AT_HOME), body: { filePath: '/' } })).status,
    ).not.toBeOneOf([401, 429])
    expect((await formLogin(BOB.password, BOB_AT_HOME)).status).toBe(303)
  })

  it('refuses the throttled address on every surface, the right password included, with Retry-After', async () => {
    const dav = await propfind(basic(BOB.user, appPassword), ATTACKER)
    expect(dav.status).toBe(429)
    expect(Number(dav.headers.get('retry-after'))).toBeGreaterThan(0)
    expect((await postMetadata({ url: t.url, auth: basic(BOB.user, BOB.password), headers: from(ATTACKER) })).status).toBe(429)
    expect((await formLogin(BOB.password, ATTACKER)).status).toBe(429)
  })

  it('counts an IPv6 client by its /64, so rotating addresses inside it does not help', async () => {
    for (let i = 0; i < 10; i++) expect((await propfind(basic(`nobody${i}`, 'x'), `2001:db8:7:1::${i + 1}`)).status).toBe(401)
    expect((await propfind(basic(BOB.user, BOB.password), '2001:db8:7:1:ffff::99')).status).toBe(429)
    expect((await propfind(basic(BOB.user, BOB.password), '2001:db8:7:2::1')).status).toBe(207)
  })

  it("forgets an address's failures once a login from it succeeds", async () => {
    const laptop = '198.51.100.30'
    for (let i = 0; i < 9; i++) expect((await formLogin(`typo-${i}`, laptop)).status).toBe(401)
    expect((await formLogin(BOB.password, laptop)).status).toBe(303)
    // Nine more mistakes are allowed again before any 429.
    for (let i = 0; i < 9; i++) expect((await formLogin(`typo-${i}`, laptop)).status).toBe(401)
    expect((await formLogin(BOB.password, laptop)).status).toBe(303)
  })

  it('checks no more of 300 guesses sent at once than of 300 sent one by one', async () => {
    const burst = '203.0.113.50'
    const answers = await Promise.all(Array.from({ length: 300 }, (_, i) => formLogin(i === 299 ? BOB.password : `burst-${i}`, burst)))
    const statuses = answers.map((r) => r.status)
    // Ten checks at most (whichever arrive first); everything else waits out the window.
    expect(statuses.filter((s) => s === 401 || s === 303).length).toBeLessThanOrEqual(10)
    expect(statuses.filter((s) => s === 429)).toHaveLength(300 - statuses.filter((s) => s !== 429).length)
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(290)
  })

  it("logging into one's own account between guesses does not wipe the guesses at someone else's", async () => {
    const mallory = '203.0.113.60'
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 3; i++) expect((await formLogin(`guess-${round}-${i}`, mallory)).status).toBe(401)
      // Alice (Mallory's own account) logs in fine: she is not the one being guessed at.
      expect((await formLogin(ALICE.password, mallory, ALICE.user)).status).toBe(303)
    }
    // Nine guesses at bob so far: one more, then the address waits.
    expect((await formLogin('guess-last', mallory)).status).toBe(401)
    expect((await formLogin('guess-after', mallory)).status).toBe(429)
    expect((await propfind(basic(BOB.user, BOB.password), mallory)).status).toBe(429)
  })
})
