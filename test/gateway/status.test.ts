/**
 * `POST /status`: what the gateway says about itself for the admin's link
 * test. The answer is built from a small source (the deal engine's routes'
 * standing) and matches its contract; every part can be absent; the route
 * sits behind the gateway's basic auth; bad input gets the gateway's
 * envelope and a 4xx, never a 500.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import express from 'express'
import { pino } from 'pino'
import { parseUnits } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createGateway, type Gateway } from '../../server/gateway/index.ts'
import { gatewayErrorHandler } from '../../server/gateway/errors.ts'
import { createStatusRouter, gatewayStatus, type StatusSource } from '../../server/gateway/status.ts'
import { gatewayOpenApi } from '../../server/gateway/openapi.ts'
import { startServer, type RunningServer } from '../../server/shared/http.ts'
import { GatewayStatusResponseSchema, GatewayStatusSchema } from '../../server/shared/contracts/gateway-status.ts'
import { expectToMatch } from '../helpers/contracts.ts'

const logger = pino({ level: 'silent' })
const basic = (user: string, password: string) => 'Basic ' + Buffer.from(`${user}:${password}`).toString('base64')

/** A request exactly as given (fetch refuses some headers). */
function raw(
  url: string,
  o: { method?: string; path?: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  const u = new URL(url)
  // Node sends a DELETE's body with neither length nor chunks unless told.
  const headers =
    o.body === undefined || o.headers?.['transfer-encoding'] ? o.headers : { 'content-length': String(o.body.length), ...o.headers }
  return new Promise((resolve, reject) => {
    const req = request({ hostname: u.hostname, port: u.port, method: o.method ?? 'POST', path: o.path ?? '/status', headers }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => (text += c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }))
    })
    req.on('error', reject)
    req.end(o.body)
  })
}

const NOTHING: StatusSource = { standing: () => undefined }

describe('POST /status on a whole gateway (service account, no deal engine)', () => {
  const user = 'bridge'
  const password = 'status-test-password'
  const auth = basic(user, password)
  let dir: string
  let gateway: Gateway
  let server: RunningServer

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gateway-status-'))
    gateway = await createGateway(
      { host: '127.0.0.1', port: 0, dataDir: dir, network: 'calibration', user, password, groupSize: 1 << 20, groupIdleSeconds: 3600 },
      { logger, folderSettleMs: 3_600_000 },
    )
    server = await startServer(gateway.app, 0)
  })
  afterAll(async () => {
    await server?.close(100)
    await gateway?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  const post = (path = '/status', headers: Record<string, string> = { authorization: auth }, body?: string) =>
    raw(server.url, { path, headers, body })

  it('says the network it serves, and that it makes no deals: no kind, no blocked reason, no route', async () => {
    const res = await post()
    expect(res.status).toBe(200)
    expect(res.headers['content-type']).toMatch(/^application\/json/)
    // Asked afresh each time: never kept by a cache between the gateway and the bridge.
    expect(res.headers['cache-control']).toBe('no-store')
    const body = JSON.parse(res.text)
    expectToMatch(GatewayStatusResponseSchema, body)
    expect(body).toEqual({ success: true, result: { network: 'calibration', deals: { blocked: false }, routes: {} } })
    // None of it is said in /file-info's headers any more.
    const probe = await fetch(`${server.url}/file-info`, {
      method: 'POST',
      headers: { authorization: auth },
      body: JSON.stringify({ filePath: '/nothing-here' }),
    })
    expect(probe.status).toBe(404)
    expect([...probe.headers.keys()].filter((h) => h.startsWith('filecoin-'))).toEqual([])
  })

  it('is behind the service account like every route but the CAR transfers', async () => {
    for (const headers of [{}, { authorization: basic(user, 'wrong') }, { authorization: 'Bearer x' }] as Record<string, string>[]) {
      const res = await post('/status', headers)
      expect(res.status).toBe(401)
      expect(res.headers['www-authenticate']).toBe('Basic realm="gateway"')
      expect(JSON.parse(res.text)).toEqual({ success: false, error: 'Authentication required' })
    }
  })

  it('takes `{}` or no body, of any content type, as a question', async () => {
    for (const body of [undefined, '{}', ' {} ']) {
      for (const type of ['application/json', 'text/plain']) {
        const res = await post('/status', { authorization: auth, 'content-type': type }, body)
        expect(res.status).toBe(200)
        expectToMatch(GatewayStatusResponseSchema, JSON.parse(res.text))
      }
    }
  })

  it.each([
    ['an unknown field', '{"network":"mainnet"}', /network/],
    ['__proto__', '{"__proto__":{"polluted":true}}', /__proto__/],
    ['an array', '[]', /object/i],
    ['a string', '"status"', /not valid JSON/],
  ])('refuses %s with 400 in the envelope', async (_what, body, says) => {
    const res = await post('/status', { authorization: auth, 'content-type': 'application/json' }, body)
    expect(res.status).toBe(400)
    const answer = JSON.parse(res.text)
    expect(answer.success).toBe(false)
    expect(answer.error).toMatch(says)
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined()
  })

  it('refuses a body that is not JSON, or over 1 KiB, in the envelope, never a 500', async () => {
    const broken = await post('/status', { authorization: auth, 'content-type': 'application/json' }, '{"a":')
    expect(broken.status).toBe(400)
    expect(JSON.parse(broken.text).success).toBe(false)
    const big = await post(
      '/status',
      { authorization: auth, 'content-type': 'application/json' },
      JSON.stringify({ pad: 'x'.repeat(2048) }),
    )
    expect(big.status).toBe(413)
    expect(JSON.parse(big.text).success).toBe(false)
    const latin = await post('/status', { authorization: auth, 'content-type': 'application/json; charset=latin1' }, '{}')
    expect(latin.status).toBeLessThan(500)
  })

  it("answers big headers within Node's limit, and refuses those over it with 431 before any route runs", async () => {
    // 12 KiB of cookie: under Node's 16 KiB limit for all headers.
    const big = await post('/status', { authorization: auth, cookie: 'a=' + 'x'.repeat(12 * 1024) })
    expect(big.status).toBe(200)
    expectToMatch(GatewayStatusResponseSchema, JSON.parse(big.text))
    const huge = await post('/status', { authorization: auth, cookie: 'a=' + 'x'.repeat(20 * 1024) })
    expect(huge.status).toBe(431)
    expect(huge.text).toBe('Request headers are too large\n')
  })

  it('takes no name from anyone\'s files: a WebDAV file or collection named "status" works with every WebDAV method', async () => {
    const dav = (method: string, path = '/status', body?: string, headers: Record<string, string> = {}) =>
      raw(server.url, { method, path, headers: { authorization: auth, ...headers }, body })
    expect((await dav('PUT', '/status', 'a file')).status).toBe(201)
    expect((await dav('GET')).text).toBe('a file')
    expect((await dav('PROPFIND', '/status', undefined, { depth: '0' })).status).toBe(207)
    expect((await dav('DELETE')).status).toBe(204)
    expect((await dav('MKCOL')).status).toBe(201)
    expect((await dav('PUT', '/status/a.txt', 'a')).status).toBe(201)
    expect((await dav('GET', '/status/a.txt')).text).toBe('a')
    expect((await dav('DELETE', '/status/')).status).toBe(204)
    // Only the exact path answers POST: /status/ and /STATUS are not the route.
    expect((await post('/STATUS')).status).not.toBe(200)
    expect(JSON.parse((await post()).text).result.network).toBe('calibration')
  })

  it('is described in the OpenAPI document from its schema', () => {
    const doc = gatewayOpenApi('test') as any
    const op = doc.paths['/status'].post
    expect(op.security).toEqual([{ basic: [] }])
    expect(op.requestBody.required).toBe(false)
    expect(Object.keys(op.responses)).toEqual(['200', '400', '401', '413'])
    const result = op.responses['200'].content['application/json'].schema.properties.result
    expect(result.required).toEqual(['deals', 'routes'])
    expect(result.properties.network.enum).toEqual(['simnet', 'mainnet', 'calibration', 'devnet'])
    expect(Object.keys(result.properties.routes.properties)).toEqual(['market', 'onchainCloud'])
    expect(result.properties.routes.properties.market.properties.escrow.type).toBe('string')
  })
})

describe("POST /status from its routes' standing", () => {
  let source: StatusSource = NOTHING
  let server: RunningServer

  beforeAll(async () => {
    const app = express()
    // Read through a getter: each test sets its own source.
    app.use(
      createStatusRouter({
        get network() {
          return source.network
        },
        standing: () => source.standing(),
      }),
    )
    app.use(gatewayErrorHandler(logger))
    server = await startServer(app, 0)
  })
  afterAll(() => server?.close(50))

  async function status(s: StatusSource) {
    source = s
    const res = await fetch(`${server.url}/status`, { method: 'POST' })
    const body = await res.json()
    expect(res.status).toBe(200)
    expectToMatch(GatewayStatusResponseSchema, body)
    return body.result
  }

  const pdp = { status: 'WARNING' as const, funds: parseUnits('12.5', 18), runwayEpochs: 4000, fundedUntilMs: Date.UTC(2027, 2, 3, 10) }
  const market = {
    dataCap: 34_359_738_368n,
    escrow: parseUnits('0.5', 18),
    locked: parseUnits('0.125', 18),
    dealsUntilMs: Date.UTC(2028, 2, 3, 10),
  }

  it('says everything a gateway with both routes knows, amounts as decimal strings', async () => {
    const blocked = 'f1abc has no DataCap: it is not a verified client, so its verified deals would be refused'
    const note = 'Fil+ ended at network version 29 (FIP-0118): deals are unverified, no DataCap is needed'
    expect(
      await status({
        network: 'mainnet',
        standing: () => ({ market: { blocked, kind: { verified: false, networkVersion: 29, note }, funds: market }, onchainCloud: pdp }),
      }),
    ).toEqual({
      network: 'mainnet',
      deals: { blocked: true, blockedReason: blocked, kind: { verified: false, networkVersion: 29, note } },
      routes: {
        market: { dataCap: '34359738368', escrow: '0.5', locked: '0.125', dealsUntil: '2028-03-03T10:00:00.000Z' },
        onchainCloud: { status: 'WARNING', funds: '12.5', fundedUntil: '2027-03-03T10:00:00.000Z' },
      },
    })
  })

  it('says each route only when it has one, and nothing it does not know', async () => {
    expect(await status(NOTHING)).toEqual({ deals: { blocked: false }, routes: {} })
    expect(await status({ standing: () => ({ onchainCloud: pdp }) })).toEqual({
      deals: { blocked: false },
      routes: { onchainCloud: { status: 'WARNING', funds: '12.5', fundedUntil: '2027-03-03T10:00:00.000Z' } },
    })
    // Not a verified client, and no active deal yet.
    const unverified = { verified: false }
    expect(await status({ standing: () => ({ market: { kind: unverified, funds: { dataCap: null, escrow: 0n, locked: 0n } } }) })).toEqual({
      deals: { blocked: false, kind: unverified },
      routes: { market: { dataCap: null, escrow: '0', locked: '0' } },
    })
    // Before the engine's first read of the chain: no network version.
    expect((await status({ standing: () => ({ market: { kind: { verified: true } } }) })).deals).toEqual({
      blocked: false,
      kind: { verified: true },
    })
  })

  it('asks the source afresh on every request', async () => {
    let problem: string | undefined = 'no escrow'
    const s: StatusSource = { standing: () => ({ market: { kind: { verified: false }, ...(problem ? { blocked: problem } : {}) } }) }
    expect((await status(s)).deals).toEqual({ blocked: true, blockedReason: 'no escrow', kind: { verified: false } })
    problem = undefined
    expect((await status(s)).deals).toEqual({ blocked: false, kind: { verified: false } })
  })

  it('keeps extreme amounts and times exact and within what ISO 8601 says', () => {
    const result = gatewayStatus({
      standing: () => ({
        market: {
          kind: { verified: false },
          // One attoFIL, and a billion FIL: no double would hold both.
          funds: { dataCap: 2n ** 64n, escrow: 1n, locked: parseUnits('1000000000.000000000000000001', 18), dealsUntilMs: -5 },
        },
        onchainCloud: { ...pdp, funds: 0n, fundedUntilMs: Infinity },
      }),
    })
    expect(result.routes).toEqual({
      market: {
        dataCap: '18446744073709551616',
        escrow: '0.000000000000000001',
        locked: '1000000000.000000000000000001',
        dealsUntil: '1970-01-01T00:00:00.000Z',
      },
      onchainCloud: { status: 'WARNING', funds: '0', fundedUntil: '9999-12-31T23:59:59.999Z' },
    })
    expect(GatewayStatusSchema.safeParse(result).success).toBe(true)
  })

  it('answers a source that fails with a 500 in the envelope, saying nothing of why', async () => {
    source = {
      standing: () => {
        throw new Error('secret internals')
      },
    }
    const res = await fetch(`${server.url}/status`, { method: 'POST' })
    expect(res.status).toBe(500)
    expect(await res.json()).toEqual({ success: false, error: 'Internal gateway error' })
  })
})

describe('the status contract', () => {
  const valid = { deals: { blocked: false }, routes: {} }
  it.each([
    ['an amount as a number', { ...valid, routes: { market: { dataCap: null, escrow: 0.5, locked: '0' } } }],
    ['an amount with 19 decimals', { ...valid, routes: { market: { dataCap: null, escrow: '0.0000000000000000001', locked: '0' } } }],
    ['DataCap with decimals', { ...valid, routes: { market: { dataCap: '1.5', escrow: '0', locked: '0' } } }],
    ['a time that is not ISO 8601', { ...valid, routes: { onchainCloud: { status: 'HEALTHY', funds: '1', fundedUntil: '2027-03-03' } } }],
    [
      'an unknown standing',
      { ...valid, routes: { onchainCloud: { status: 'FINE', funds: '1', fundedUntil: '2027-03-03T10:00:00.000Z' } } },
    ],
    ['an unknown network', { ...valid, network: 'testnet' }],
    ['blocked without a reason', { ...valid, deals: { blocked: true } }],
    ['a reason without being blocked', { ...valid, deals: { blocked: false, blockedReason: 'no escrow' } }],
  ])('refuses %s', (_what, status) => {
    expect(GatewayStatusSchema.safeParse(status).success).toBe(false)
  })

  it('takes a time at any precision and offset, as RFC 3339 writes it', () => {
    for (const fundedUntil of ['2027-03-03T10:00:00Z', '2027-03-03T12:00:00.5+02:00', '2027-03-03T10:00:00.000000Z']) {
      expect(
        GatewayStatusSchema.safeParse({ ...valid, routes: { onchainCloud: { status: 'HEALTHY', funds: '1', fundedUntil } } }).success,
      ).toBe(true)
    }
  })

  it('lets a client read a newer gateway that says more', () => {
    const newer = { ...valid, uptimeSeconds: 5, routes: { somethingNew: {}, market: { dataCap: null, escrow: '0', locked: '0', more: 1 } } }
    expect(GatewayStatusSchema.parse(newer)).toEqual({ ...valid, routes: { market: { dataCap: null, escrow: '0', locked: '0' } } })
  })
})
