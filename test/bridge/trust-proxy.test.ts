import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig, parseTrustProxy } from '../../server/shared/config.ts'
import { ALICE, basic, postMetadata, RECORDED_FILE_INFO, startBridge, startFakeGateway, type TestBridge } from './helpers.ts'

type Fake = Awaited<ReturnType<typeof startFakeGateway>>

const login = (url: string, headers: Record<string, string>) =>
  fetch(`${url}/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams({ user: ALICE.user, password: ALICE.password }).toString(),
  })

describe('TRUST_PROXY', () => {
  let gateway: Fake
  let trusted: TestBridge
  let direct: TestBridge
  beforeAll(async () => {
    gateway = await startFakeGateway((app) => app.post('/file-info', (_req, res) => res.json(RECORDED_FILE_INFO)))
    trusted = await startBridge(gateway.url, { trustProxy: 'loopback' }, { throttle: { maxFailures: 2, windowMs: 60_000 } })
    direct = await startBridge(gateway.url, {}, { throttle: { maxFailures: 2, windowMs: 60_000 } })
  })
  afterAll(async () => {
    await trusted.close()
    await direct.close()
    await gateway.close()
  })

  it('marks the session cookie Secure when the trusted proxy says the client used https', async () => {
    const res = await login(trusted.url, { 'x-forwarded-proto': 'https', host: 'cloud.example.org' })
    expect(res.status).toBe(303)
    expect(res.headers.get('set-cookie')).toMatch(/;\s*Secure/i)
  })

  it('ignores X-Forwarded-Proto when no proxy is trusted (the default)', async () => {
    const res = await login(direct.url, { 'x-forwarded-proto': 'https', host: 'cloud.example.org' })
    expect(res.status).toBe(303)
    expect(res.headers.get('set-cookie')).not.toMatch(/Secure/i)
  })

  it("throttles the client address the trusted proxy names, not the proxy's own", async () => {
    for (let i = 0; i < 2; i++)
      expect(
        (await postMetadata({ url: trusted.url, auth: basic(`x${i}`, 'bad'), headers: { 'x-forwarded-for': '203.0.113.7' } })).status,
      ).toBe(401)
    expect((await postMetadata({ url: trusted.url, auth: basic('x9', 'bad'), headers: { 'x-forwarded-for': '203.0.113.7' } })).status).toBe(
      429,
    )
    // Another client behind the same proxy is not locked out.
    expect((await postMetadata({ url: trusted.url, headers: { 'x-forwarded-for': '203.0.113.8' } })).status).toBe(200)
  })

  it('without trust, a client cannot choose its address to escape the throttle', async () => {
    for (let i = 0; i < 2; i++)
      expect(
        (await postMetadata({ url: direct.url, auth: basic(`y${i}`, 'bad'), headers: { 'x-forwarded-for': `198.51.100.${i}` } })).status,
      ).toBe(401)
    expect(
      (await postMetadata({ url: direct.url, auth: basic('y9', 'bad'), headers: { 'x-forwarded-for': '198.51.100.99' } })).status,
    ).toBe(429)
  })

  it('is read from the environment: off by default, booleans, hop counts and address lists', () => {
    expect(loadConfig({}).bridge.trustProxy).toBe(false)
    expect(loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8' }).bridge.trustProxy).toBe('loopback, 10.0.0.0/8')
    expect(parseTrustProxy('true')).toBe(true)
    expect(parseTrustProxy('1')).toBe(1)
    expect(() => loadConfig({ TRUST_PROXY: 'loopback; rm -rf' })).toThrow()
    expect(() => loadConfig({ FILESYNC: 'nextcloud' })).toThrow(/NEXTCLOUD_URL/)
    expect(loadConfig({ FILESYNC: 'nextcloud', NEXTCLOUD_URL: 'https://cloud.example.org/' }).bridge).toMatchObject({
      filesync: 'nextcloud',
      nextcloudUrl: 'https://cloud.example.org',
    })
  })
})
