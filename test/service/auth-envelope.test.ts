import { statSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TEST_STORE } from '../helpers/stores.ts'
import { expectErrorEnvelope, startTestService, type TestService } from './helpers.ts'

let t: TestService
beforeAll(async () => {
  t = await startTestService()
})
afterAll(() => t.close())

const days = '/private/v1/get-network-epoch-duration-from-days'

describe('first start', () => {
  it.skipIf(TEST_STORE === 'postgres')('saves the first tenant key 0600 in the data dir and only its hash in SQLite', () => {
    const file = join(t.dir, 'api-key')
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(readFileSync(file, 'utf8').trim()).toBe(t.key)
    const db = readFileSync(join(t.dir, 'service.sqlite'))
    expect(db.includes(Buffer.from(t.key))).toBe(false)
  })
})

describe('X-API-KEY', () => {
  it('401 without a key, with the error envelope', async () => {
    const r = await t.post(days, { duration: 1 }, { 'x-api-key': '' })
    expect(r.status).toBe(401)
    expectErrorEnvelope(r.json)
  })

  it('401 with an unknown key', async () => {
    const r = await t.post(days, { duration: 1 }, { 'x-api-key': 'fgs_not-a-key' })
    expect(r.status).toBe(401)
    expectErrorEnvelope(r.json)
  })

  it('401 with a wrong key at once, without waiting for a body that never ends', async () => {
    const { connect } = await import('node:net')
    const socket = connect(Number(new URL(t.url).port), '127.0.0.1')
    socket.on('error', () => {})
    let answer = ''
    socket.on('data', (d) => (answer += d))
    // 1 000 bytes promised, 1 sent: the body parser would wait until the idle limit.
    socket.write(
      `POST ${days} HTTP/1.1\r\nHost: x\r\nX-API-KEY: fgs_wrong\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`,
    )
    await new Promise<void>((resolve) => {
      const check = () => (answer.includes('\r\n\r\n') ? resolve() : setTimeout(check, 20))
      check()
    })
    socket.destroy()
    expect(answer).toMatch(/^HTTP\/1\.1 401 /)
  }, 5_000)

  it('public endpoints need no key', async () => {
    const res = await fetch(`${t.url}/public/v1/get-version`)
    expect(res.status).toBe(200)
    expect((await res.json()).result.version).toBe('1.0.0')
  })

  it('403 when the plan is not eligible, 200 when it is', async () => {
    const tenant = await t.service.tenants.create('provider-co', 'providers-free')
    const key = await t.service.tenants.createKey(tenant.id)
    const denied = await t.post('/private/v1/get-on-chain-deals', {}, { 'x-api-key': key })
    expect(denied.status).toBe(403)
    expectErrorEnvelope(denied.json)
    expect((await t.post('/private/v1/onboarding-policy/export', undefined, { 'x-api-key': key })).status).toBe(403)
    // Providers (free plan) may convert units.
    expect((await t.post(days, { duration: 2 }, { 'x-api-key': key })).json).toEqual({ error: null, result: 5760 })
  })

  it('Clients free cannot use the premium onboarding policy endpoints; changing the plan opens them', async () => {
    const tenant = await t.service.tenants.create('free-client', 'clients-free')
    const key = await t.service.tenants.createKey(tenant.id)
    expect((await t.post('/private/v1/onboarding-policy/export', undefined, { 'x-api-key': key })).status).toBe(403)
    await t.service.tenants.setPlan(tenant.id, 'clients-premium')
    expect((await t.post('/private/v1/onboarding-policy/export', undefined, { 'x-api-key': key })).status).toBe(200)
  })
})

describe('error envelope', () => {
  it("each error code is this request's UUID", async () => {
    const a = await t.post(days, { duration: 'x' })
    const b = await t.post(days, { duration: 'x' })
    expectErrorEnvelope(a.json)
    expect(a.json.error.code).not.toBe(b.json.error.code)
  })

  it('404 for an unknown endpoint, in the envelope', async () => {
    const r = await t.post('/private/v1/no-such-thing', {})
    expect(r.status).toBe(404)
    expectErrorEnvelope(r.json)
  })

  it.each([
    ['malformed JSON', '{"duration": ', {}],
    ['a JSON array', '[180]', {}],
    ['a JSON string', '"180"', {}],
    ['no body', undefined, {}],
    ['a non-JSON content type', 'duration=180', { 'content-type': 'application/x-www-form-urlencoded' }],
  ])('400 for %s', async (_name, body, headers) => {
    const r = await t.post(days, body, headers as Record<string, string>)
    expect(r.status).toBe(400)
    expectErrorEnvelope(r.json)
  })

  it('400 (not 413 or 500) for a body over 1 MiB', async () => {
    const r = await t.post(days, JSON.stringify({ duration: 1, pad: 'x'.repeat(1024 * 1024 + 10) }))
    expect(r.status).toBe(400)
    expectErrorEnvelope(r.json)
  })
})

describe('epoch endpoints', () => {
  it('converts days to epochs (2880 per day)', async () => {
    expect((await t.post(days, { duration: 180 })).json).toEqual({ error: null, result: 518400 })
    expect((await t.post(days, { duration: 1278 })).json).toEqual({ error: null, result: 3680640 })
  })

  it.each([
    [{ duration: -5 }, 'negative'],
    [{ duration: 0 }, 'zero'],
    [{ duration: 1279 }, 'beyond the longest deal'],
    [{ duration: 1.5 }, 'fractional'],
    [{ duration: '180' }, 'a string'],
    [{}, 'missing'],
    [{ duration: 180, days: 1 }, 'an unknown field'],
    [{ duration: null }, 'null'],
  ])('400 for %j (%s)', async (body: unknown, _why: string) => {
    const r = await t.post(days, body)
    expect(r.status).toBe(400)
    expectErrorEnvelope(r.json)
  })

  it('converts a unix time in milliseconds to the epoch running then', async () => {
    const genesisMs = 1704067200 * 1000
    const path = '/private/v1/get-network-epoch-from-unix-timestamp'
    expect((await t.post(path, { unixTimestamp: genesisMs })).json.result).toBe(0)
    expect((await t.post(path, { unixTimestamp: genesisMs + 29_999 })).json.result).toBe(0)
    expect((await t.post(path, { unixTimestamp: genesisMs + 30_000 })).json.result).toBe(1)
    expect((await t.post(path, { unixTimestamp: genesisMs + 86_400_000 })).json.result).toBe(2880)
  })

  it.each([
    [{ unixTimestamp: 1704067200 * 1000 - 1 }, 'before genesis'],
    [{ unixTimestamp: -1 }, 'negative'],
    [{ unixTimestamp: 9223372036854775808 }, 'beyond int64'],
    [{ unixTimestamp: 1.5 }, 'fractional'],
    [{ unixTimestamp: '1704067200000' }, 'a string'],
  ])('400 for %j (%s)', async (body: unknown, _why: string) => {
    const r = await t.post('/private/v1/get-network-epoch-from-unix-timestamp', body)
    expect(r.status).toBe(400)
    expectErrorEnvelope(r.json)
  })
})

describe('/openapi.json', () => {
  it('describes every endpoint, generated from the request schemas', async () => {
    const doc = await (await fetch(`${t.url}/openapi.json`)).json()
    expect(doc.openapi).toMatch(/^3\./)
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/public/v1/ticker/get-latest',
        '/public/v1/ticker/get-latest-by-pair',
        '/private/v1/get-on-chain-deals',
        '/private/v1/get-best-available-providers',
        '/private/v1/get-provider-availability',
        '/private/v1/onboarding-policy/import',
        '/private/v1/onboarding-policy/export',
      ]),
    )
    const body = doc.paths['/private/v1/get-provider-availability'].post.requestBody.content['application/json'].schema
    expect(body.required).toEqual(
      expect.arrayContaining([
        'providerAddressId',
        'duration',
        'storagePricePerEpoch',
        'verifiedDeal',
        'transferSize',
        'transferType',
        'removeUnsealedCopy',
      ]),
    )
    expect(body.properties.transferType.enum).toEqual(['http', 'graphsync', 'libp2p', 'manual'])
    expect(doc.components.securitySchemes.ApiKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-API-KEY' })
  })
})
