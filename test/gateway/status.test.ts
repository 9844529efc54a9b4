/**
 * `GET /status`: what the gateway says about itself for the admin's link
 * test. The answer is built from a small source (the deal engine's calls in
 * index.ts) and matches its contract; every part can be absent; the route
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

/** A request exactly as given (fetch sends no body with GET and refuses some headers). */
function raw(
  url: string,
  o: { method?: string; path?: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  const u = new URL(url)
  // Node sends a DELETE's body with neither length nor chunks unless told.
  const headers =
    o.body === undefined || o.headers?.['transfer-encoding'] ? o.headers : { 'content-length': String(o.body.length), ...o.headers }
  return new Promise((resolve, reject) => {
    const req = request({ hostname: u.hostname, port: u.port, method: o.method ?? 'GET', path: o.path ?? '/status', headers }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => (text += c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }))
    })
    req.on('error', reject)
    req.end(o.body)
  })
}

const NOTHING: StatusSource = {
  dealsBlocked: () => undefined,
  dealKind: () => undefined,
  onchainCloud: () => undefined,
  dealMarket: () => undefined,
}

describe('GET /status on a whole gateway (service account, no deal engine)', () => {
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

  const get = (path = '/status', headers: Record<string, string> = { authorization: auth }) => raw(server.url, { path, headers })

  it('says the network it serves, and that it makes no deals: no kind, no blocked reason, no route', async () => {
    const res = await get()
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
      const res = await get('/status', headers)
      expect(res.status).toBe(401)
      expect(res.headers['www-authenticate']).toBe('Basic realm="gateway"')
      expect(JSON.parse(res.text)).toEqual({ success: false, error: 'Authentication required' })
    }
  })

  it('answers HEAD as GET, without a body', async () => {
    const res = await raw(server.url, { method: 'HEAD', headers: { authorization: auth } })
    expect(res.status).toBe(200)
    expect(res.text).toBe('')
  })

  it.each(['POST', 'PUT', 'PATCH', 'DELETE'])('refuses %s with 405 in the envelope, storing nothing', async (method) => {
    const res = await raw(server.url, {
      method,
      headers: { authorization: auth, 'content-type': 'application/json' },
      body: '{"network":"mainnet"}',
    })
    expect(res.status).toBe(405)
    expect(res.headers.allow).toBe('GET, HEAD')
    expect(JSON.parse(res.text)).toEqual({ success: false, error: `${method} is not allowed on /status: use GET` })
    // No file named "status" came of it.
    expect((await raw(server.url, { method: 'PROPFIND', headers: { authorization: auth, depth: '0' } })).status).toBe(404)
  })

  it.each([
    ['a parameter', '?verbose=true', '"verbose"'],
    ['a repeated one', '?a=1&a=2', '"a"'],
    ['a bracketed one', '?x[y]=1', '"x[y]"'],
    ['__proto__', '?__proto__=1&constructor=2', '"__proto__", "constructor"'],
    ['a nameless one', '?=1', '""'],
    ['many', '?' + Array.from({ length: 50 }, (_, i) => `p${i}=1`).join('&'), '"p0", "p1", "p2", "p3", "p4", …'],
    ['a very long name', '?' + 'k'.repeat(8000), `"${'k'.repeat(40)}"`],
  ])('refuses %s in the query with 400 naming it, shortly', async (_what, query, named) => {
    const res = await get('/status' + query)
    expect(res.status).toBe(400)
    const body = JSON.parse(res.text)
    expect(body).toEqual({ success: false, error: `GET /status takes no query parameters: ${named}` })
    expect(body.error.length).toBeLessThan(300)
  })

  it('takes an empty query as none', async () => {
    expect((await get('/status?')).status).toBe(200)
  })

  it('refuses a body, sized or chunked, with 400', async () => {
    for (const headers of [{ 'content-length': '2' }, { 'transfer-encoding': 'chunked' }] as Record<string, string>[]) {
      const res = await raw(server.url, { headers: { authorization: auth, 'content-type': 'application/json', ...headers }, body: '{}' })
      expect(res.status).toBe(400)
      expect(JSON.parse(res.text)).toEqual({ success: false, error: 'GET /status takes no body' })
    }
    // An empty one is no body.
    expect((await raw(server.url, { headers: { authorization: auth, 'content-length': '0' } })).status).toBe(200)
  })

  it("answers big headers within Node's limit, and refuses those over it with 431 before any route runs", async () => {
    // 12 KiB of cookie: under Node's 16 KiB limit for all headers.
    const big = await get('/status', { authorization: auth, cookie: 'a=' + 'x'.repeat(12 * 1024) })
    expect(big.status).toBe(200)
    expectToMatch(GatewayStatusResponseSchema, JSON.parse(big.text))
    const huge = await get('/status', { authorization: auth, cookie: 'a=' + 'x'.repeat(20 * 1024) })
    expect(huge.status).toBe(431)
    expect(huge.text).toBe('Request headers are too large\n')
  })

  it('is only the exact path: a WebDAV collection named "status" still works, and /status/ and /STATUS are its paths', async () => {
    expect((await raw(server.url, { method: 'MKCOL', headers: { authorization: auth } })).status).toBe(201)
    try {
      expect((await raw(server.url, { method: 'PROPFIND', headers: { authorization: auth, depth: '0' } })).status).toBe(207)
      expect((await raw(server.url, { method: 'PUT', path: '/status/a.txt', headers: { authorization: auth }, body: 'a' })).status).toBe(
        201,
      )
      expect((await get('/status/a.txt')).text).toBe('a')
      // GET on the collection with its slash is WebDAV's; without it, the status.
      expect((await get('/status/')).text).not.toContain('"success"')
      expect((await get('/STATUS')).status).toBe(404)
      expect(JSON.parse((await get()).text).result.network).toBe('calibration')
    } finally {
      expect((await raw(server.url, { method: 'DELETE', path: '/status/', headers: { authorization: auth } })).status).toBe(204)
    }
  })

  it('is described in the OpenAPI document from its schema', () => {
    const doc = gatewayOpenApi('test') as any
    const op = doc.paths['/status'].get
    expect(op.security).toEqual([{ basic: [] }])
    expect(Object.keys(op.responses)).toEqual(['200', '400', '401', '405'])
    const result = op.responses['200'].content['application/json'].schema.properties.result
    expect(result.required).toEqual(['deals', 'routes'])
    expect(result.properties.network.enum).toEqual(['simnet', 'mainnet', 'calibration', 'devnet'])
    expect(Object.keys(result.properties.routes.properties)).toEqual(['market', 'onchainCloud'])
    expect(result.properties.routes.properties.market.properties.escrow.type).toBe('string')
  })
})

describe('GET /status from its source', () => {
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
        dealsBlocked: () => source.dealsBlocked(),
        dealKind: () => source.dealKind(),
        onchainCloud: () => source.onchainCloud(),
        dealMarket: () => source.dealMarket(),
      }),
    )
    app.use(gatewayErrorHandler(logger))
    server = await startServer(app, 0)
  })
  afterAll(() => server?.close(50))

  async function status(s: StatusSource) {
    source = s
    const res = await fetch(`${server.url}/status`)
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
        dealsBlocked: () => blocked,
        dealKind: () => ({ verified: false, networkVersion: 29, note }),
        onchainCloud: () => pdp,
        dealMarket: () => market,
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
    expect(await status({ ...NOTHING, onchainCloud: () => pdp })).toEqual({
      deals: { blocked: false },
      routes: { onchainCloud: { status: 'WARNING', funds: '12.5', fundedUntil: '2027-03-03T10:00:00.000Z' } },
    })
    // Not a verified client, and no active deal yet.
    expect(await status({ ...NOTHING, dealMarket: () => ({ dataCap: null, escrow: 0n, locked: 0n }) })).toEqual({
      deals: { blocked: false },
      routes: { market: { dataCap: null, escrow: '0', locked: '0' } },
    })
    // Before the engine's first read of the chain: no network version.
    expect((await status({ ...NOTHING, dealKind: () => ({ verified: true }) })).deals).toEqual({ blocked: false, kind: { verified: true } })
  })

  it('asks the source afresh on every request', async () => {
    let problem: string | undefined = 'no escrow'
    const s = { ...NOTHING, dealsBlocked: () => problem }
    expect((await status(s)).deals).toEqual({ blocked: true, blockedReason: 'no escrow' })
    problem = undefined
    expect((await status(s)).deals).toEqual({ blocked: false })
  })

  it('keeps extreme amounts and times exact and within what ISO 8601 says', () => {
    const result = gatewayStatus({
      ...NOTHING,
      // One attoFIL, and a billion FIL: no double would hold both.
      dealMarket: () => ({ dataCap: 2n ** 64n, escrow: 1n, locked: parseUnits('1000000000.000000000000000001', 18), dealsUntilMs: -5 }),
      onchainCloud: () => ({ ...pdp, funds: 0n, fundedUntilMs: Infinity }),
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
      ...NOTHING,
      dealMarket: () => {
        throw new Error('secret internals')
      },
    }
    const res = await fetch(`${server.url}/status`)
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
