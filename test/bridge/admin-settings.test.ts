import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createBridge } from '../../server/bridge/index.ts'
import { startServer } from '../../server/shared/http.ts'
import type { Request, Response } from 'express'
import { LinkTestResultSchema } from '../../server/shared/contracts/admin-settings.ts'
import { expectToMatch } from '../helpers/contracts.ts'
import {
  ADMIN_PASSWORD,
  aliceAuth,
  basic,
  logger,
  postMetadata,
  startBridge,
  startBridgeOnRealGateway,
  startFakeGateway,
} from './helpers.ts'

const SETTINGS = '/ocs/v2.php/apps/gateway/admin/settings'
const TEST_LINK = '/ocs/v2.php/apps/gateway/admin/test-link'
const CONFIG = '/ocs/v2.php/apps/gateway/config'
const adminAuth = basic('admin', ADMIN_PASSWORD)

interface Call {
  method?: string
  auth?: string | null
  ocs?: boolean
  body?: unknown
  raw?: string
  contentType?: string
}

async function call(base: string, path: string, c: Call = {}): Promise<{ status: number; text: string; body: any }> {
  const headers: Record<string, string> = {}
  if (c.ocs !== false) headers['ocs-apirequest'] = 'true'
  const auth = c.auth === undefined ? adminAuth : c.auth
  if (auth !== null) headers.authorization = auth
  const payload = c.raw ?? (c.body === undefined ? undefined : JSON.stringify(c.body))
  if (payload !== undefined) headers['content-type'] = c.contentType ?? 'application/json'
  const res = await fetch(base + path, { method: c.method ?? 'GET', headers, body: payload })
  const text = await res.text()
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    body = text
  }
  return { status: res.status, text, body }
}

/** A closed port: nothing listens there. */
async function deadUrl(): Promise<string> {
  const server = await startServer((_req: unknown, res: { end(): void }) => res.end(), 0)
  await server.close(0)
  return server.url
}

describe('admin settings and the tab config (live gateway link)', () => {
  let t: Awaited<ReturnType<typeof startBridgeOnRealGateway>>
  const valid = { gatewayUrl: '', gatewayUser: '', pathMap: '/{user}', network: 'mainnet', ipfsGateway: 'https://ipfs.io' }

  beforeAll(async () => {
    t = await startBridgeOnRealGateway()
    expect(
      (await fetch(`${t.url}/remote.php/dav/files/alice/docs`, { method: 'MKCOL', headers: { authorization: aliceAuth } })).status,
    ).toBe(201)
    const put = await fetch(`${t.url}/remote.php/dav/files/alice/docs/a.txt`, {
      method: 'PUT',
      headers: { authorization: aliceAuth },
      body: 'hello from alice',
    })
    expect(put.status).toBe(201)
  })
  afterAll(async () => {
    await t.close()
  })

  it('shows the defaults from the configuration, the password only as set or not', async () => {
    const res = await call(t.url, SETTINGS)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      success: true,
      settings: {
        gatewayUrl: '',
        gatewayUser: 'bridge',
        gatewayPasswordSet: true,
        pathMap: '/{user}',
        network: 'mainnet',
        ipfsGateway: 'https://ipfs.io',
        mounts: [],
      },
    })
    expect(res.text).not.toContain(t.gateway.password)
  })

  it('refuses non-admins with 403 in the bridge envelope, on every admin route', async () => {
    for (const [method, path, body] of [
      ['GET', SETTINGS, undefined],
      ['PUT', SETTINGS, valid],
      ['POST', TEST_LINK, {}],
    ] as const) {
      const res = await call(t.url, path, { method, auth: aliceAuth, body })
      expect(res.status).toBe(403)
      expect(res.body).toMatchObject({ success: false, error: expect.any(String) })
    }
  })

  it('answers 401 without credentials and 412 without OCS-APIRequest', async () => {
    expect((await call(t.url, SETTINGS, { auth: null })).status).toBe(401)
    const csrf = await call(t.url, SETTINGS, { ocs: false })
    expect(csrf.status).toBe(412)
    expect(csrf.body).toEqual({ message: 'CSRF check failed' })
    expect((await call(t.url, TEST_LINK, { method: 'POST', ocs: false })).status).toBe(412)
    expect((await call(t.url, CONFIG, { auth: aliceAuth, ocs: false })).status).toBe(412)
  })

  it.each([
    ['gatewayUrl', { gatewayUrl: 'ftp://gateway.example.org' }],
    ['gatewayUrl', { gatewayUrl: 'https://bridge:secret@gateway.example.org' }],
    ['gatewayUrl', { gatewayUrl: 'not a url' }],
    ['gatewayUser', { gatewayUser: 'a:b' }],
    ['pathMap', { pathMap: 'users/{user}' }],
    ['pathMap', { pathMap: '/files/../{user}' }],
    ['pathMap', { pathMap: '/files//{user}' }],
    ['pathMap', { pathMap: '/files\\{user}' }],
    ['pathMap', { pathMap: '/{uid}' }],
    ['network', { network: 'testnet' }],
    ['ipfsGateway', { ipfsGateway: 'javascript:alert(1)' }],
    ['gatewayPassword', { gatewayPassword: 42 }],
    ['network', { network: undefined }],
  ])('refuses a bad %s with 400 naming the field', async (field, change) => {
    const res = await call(t.url, SETTINGS, { method: 'PUT', body: { ...valid, ...change } })
    expect(res.status).toBe(400)
    expect(res.body.success).toBe(false)
    expect(res.body.error).toContain(field)
  })

  it('refuses unknown fields, non-JSON bodies and broken JSON with 400', async () => {
    const unknown = await call(t.url, SETTINGS, { method: 'PUT', body: { ...valid, gatewayToken: 'x' } })
    expect(unknown.status).toBe(400)
    expect(unknown.body.error).toContain('gatewayToken')
    expect(
      (await call(t.url, SETTINGS, { method: 'PUT', raw: 'gatewayUrl=x', contentType: 'application/x-www-form-urlencoded' })).status,
    ).toBe(400)
    expect((await call(t.url, SETTINGS, { method: 'PUT', raw: '{"gatewayUrl":' })).status).toBe(400)
    expect((await call(t.url, SETTINGS, { method: 'PUT', raw: '[1,2]' })).status).toBe(400)
  })

  it('never sends a saved password back, and keeps it when a save leaves it out', async () => {
    const secret = 'write-only-secret-1234'
    const gateway = await startFakeGateway(() => {})
    try {
      const saved = await call(t.url, SETTINGS, {
        method: 'PUT',
        body: { ...valid, gatewayUrl: gateway.url, gatewayUser: 'svc', gatewayPassword: secret },
      })
      expect(saved.status).toBe(200)
      expect(saved.text).not.toContain(secret)
      expect(saved.body.settings).toMatchObject({ gatewayUrl: gateway.url, gatewayUser: 'svc', gatewayPasswordSet: true })
      const kept = await call(t.url, SETTINGS, { method: 'PUT', body: { ...valid, gatewayUrl: gateway.url, gatewayUser: 'svc' } })
      expect(kept.body.settings.gatewayPasswordSet).toBe(true)
      const read = await call(t.url, SETTINGS)
      expect(read.text).not.toContain(secret)
      expect(read.body.settings.gatewayPasswordSet).toBe(true)
      // The next metadata call goes to the saved gateway, with the saved credentials.
      await postMetadata({ url: t.url, body: { filePath: '/docs/a.txt' } })
      const seen = gateway.requests.find((r) => r.url === '/file-info')
      expect(seen).toBeDefined()
      const cleared = await call(t.url, SETTINGS, {
        method: 'PUT',
        body: { ...valid, gatewayUrl: gateway.url, gatewayUser: 'svc', gatewayPassword: '' },
      })
      expect(cleared.body.settings.gatewayPasswordSet).toBe(false)
    } finally {
      await call(t.url, SETTINGS, { method: 'PUT', body: valid })
      await gateway.close()
    }
  })

  it('applies a saved path map and gateway URL on the very next metadata call', async () => {
    expect((await postMetadata({ url: t.url, body: { filePath: '/docs/a.txt' } })).status).toBe(200)

    await call(t.url, SETTINGS, { method: 'PUT', body: { ...valid, pathMap: '/archive/{user}' } })
    expect((await postMetadata({ url: t.url, body: { filePath: '/docs/a.txt' } })).status).toBe(404)

    await call(t.url, SETTINGS, { method: 'PUT', body: { ...valid, gatewayUrl: await deadUrl() } })
    expect((await postMetadata({ url: t.url, body: { filePath: '/docs/a.txt' } })).status).toBe(502)

    // Back to the gateway of the configuration, with its service account.
    await call(t.url, SETTINGS, { method: 'PUT', body: valid })
    const back = await postMetadata({ url: t.url, body: { filePath: '/docs/a.txt' } })
    expect(back.status).toBe(200)
    expect(back.body.metadata.file).toMatchObject({ path: '/docs', file: 'a.txt' })
  })

  it('tells any logged-in user the network, IPFS gateway and genesis: the network the gateway reports, whatever the setting says (issue 38)', async () => {
    const before = await call(t.url, CONFIG, { auth: aliceAuth })
    expect(before.status).toBe(200)
    expect(before.body).toEqual({
      success: true,
      config: { network: 'mainnet', ipfsGateway: 'https://ipfs.io', genesisTimestamp: 1598306400, epochSeconds: 30 },
    })
    await call(t.url, SETTINGS, { method: 'PUT', body: { ...valid, network: 'calibration', ipfsGateway: 'https://dweb.link/' } })
    const after = await call(t.url, CONFIG, { auth: aliceAuth })
    // The gateway still says mainnet: its dates and links stay mainnet's, never relabelled by a setting.
    expect(after.body.config).toEqual({
      network: 'mainnet',
      ipfsGateway: 'https://dweb.link',
      genesisTimestamp: 1598306400,
      epochSeconds: 30,
    })
    expect((await call(t.url, CONFIG, { auth: null })).status).toBe(401)
    await call(t.url, SETTINGS, { method: 'PUT', body: valid })
  })

  it('follows the saved network only for a gateway that does not say which it serves (no POST /status)', async () => {
    const silent = await startFakeGateway(() => {})
    try {
      await call(t.url, SETTINGS, { method: 'PUT', body: { ...valid, gatewayUrl: silent.url, network: 'calibration' } })
      const config = await call(t.url, CONFIG, { auth: aliceAuth })
      expect(config.body.config).toMatchObject({ network: 'calibration', genesisTimestamp: 1667326380 })
    } finally {
      await call(t.url, SETTINGS, { method: 'PUT', body: valid })
      await silent.close()
    }
  })

  it('tests the saved link against the live gateway: success, status and latency', async () => {
    const res = await call(t.url, TEST_LINK, { method: 'POST' })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      success: true,
      status: expect.any(Number),
      message: expect.any(String),
      latencyMs: expect.any(Number),
    })
    expect(res.body.latencyMs).toBeGreaterThanOrEqual(0)
    // The gateway says it serves mainnet, as the settings do.
    expect(res.body.warning).toBeUndefined()
  })

  it('warns when the gateway serves another network than the form names, and tests the form without saving it', async () => {
    const res = await call(t.url, TEST_LINK, { method: 'POST', body: { network: 'calibration' } })
    expect(res.body).toMatchObject({
      success: true,
      warning: 'The gateway serves the mainnet network, but these settings say calibration: dates and explorer links would be wrong',
    })
    expect((await call(t.url, SETTINGS)).body.settings.network).toBe('mainnet')
  })

  describe("what the gateway's POST /status adds", () => {
    type Handler = (req: Request, res: Response) => void
    let answer: Handler
    let probeAuth: string | undefined
    let gateway: Awaited<ReturnType<typeof startFakeGateway>>
    beforeAll(async () => {
      gateway = await startFakeGateway((app) => {
        app.post('/file-info', (req, res) => {
          probeAuth = req.headers.authorization
          res.status(404).json({ success: false, error: 'File or folder not found' })
        })
        app.post('/status', (req, res) => answer(req, res))
      })
    })
    afterAll(() => gateway.close())

    const NOTHING_SAID = { deals: { blocked: false }, routes: {} }
    const says =
      (result: unknown): Handler =>
      (_req, res) =>
        void res.json({ success: true, result })
    /** The link test's answer for the fake gateway, its POST /status answering with `handler`. */
    async function testLink(handler: Handler, form: Record<string, unknown> = {}) {
      answer = handler
      const res = await call(t.url, TEST_LINK, { method: 'POST', body: { gatewayUrl: gateway.url, ...form } })
      expect(res.status).toBe(200)
      expectToMatch(LinkTestResultSchema, res.body)
      return res.body
    }
    const extrasOf = (body: Record<string, unknown>) =>
      Object.fromEntries(
        ['warning', 'dealKind', 'dealsWarning', 'onchainCloud', 'dealMarket', 'nextGroup'].flatMap((k) =>
          k in body ? [[k, body[k]]] : [],
        ),
      )

    it('passes on which deals the gateway proposes, in the words the admin page shows', async () => {
      const note = 'Fil+ ended at network version 29 (FIP-0118): deals are unverified, no DataCap is needed'
      const kindSaid = async (kind: unknown) => (await testLink(says({ ...NOTHING_SAID, deals: { blocked: false, kind } }))).dealKind
      expect(await kindSaid({ verified: false, networkVersion: 29, note })).toBe(`The gateway proposes unverified: ${note}`)
      expect(await kindSaid({ verified: true, networkVersion: 28 })).toBe('The gateway proposes verified (Fil+): each deal uses DataCap')
      expect(await kindSaid({ verified: false })).toBe('The gateway proposes unverified (DEAL_VERIFIED=false)')
    })

    it('passes on why the gateway proposes no deals', async () => {
      const reason = 't1abc has no DataCap: it is not a verified client, so its verified deals would be refused'
      const body = await testLink(says({ ...NOTHING_SAID, deals: { blocked: true, blockedReason: reason } }))
      expect(body).toMatchObject({ success: true, dealsWarning: `The gateway proposes no deals: ${reason}` })
      expect((await testLink(says(NOTHING_SAID))).dealsWarning).toBeUndefined()
    })

    it("passes on what pays for the deal market's copies", async () => {
      const market = { dataCap: '34359738368', escrow: '0.5', locked: '0.125', dealsUntil: '2028-03-03T10:00:00.000Z' }
      expect((await testLink(says({ ...NOTHING_SAID, routes: { market } }))).dealMarket).toEqual(market)
      // Not a verified client, and nothing stored yet.
      const plain = { dataCap: null, escrow: '0', locked: '0' }
      expect((await testLink(says({ ...NOTHING_SAID, routes: { market: plain } }))).dealMarket).toEqual(plain)
    })

    it('says which routes store the next group, at what price per TiB-month, and why', async () => {
      const why = "unverified deals at each provider's own ask, at most 0.5 FIL per TiB-month (DEAL_MAX_PRICE_PER_TIB_MONTH 3 USD)"
      const pdpWhy = 'PDP_COPIES: 2 copies on Filecoin Onchain Cloud, paid in USDFC'
      const nextGroup = [
        { route: 'market', copies: 2, maxPricePerTiBMonth: '0.5', maxPricePerTiBMonthUsd: '3.00', why },
        { route: 'onchainCloud', copies: 2, why: pdpWhy },
      ]
      expect((await testLink(says({ ...NOTHING_SAID, nextGroup }))).nextGroup).toEqual([
        { route: 'the deal market', copies: 2, price: 'at most 0.5 FIL per TiB-month (about 3.00 USD)', why },
        { route: 'Filecoin Onchain Cloud (PDP)', copies: 2, why: pdpWhy },
      ])
      // Mainnet without a ceiling: the market makes no copy, and says why.
      const off = 'on mainnet every deal is paid since Fil+ ended (FIP-0118), and DEAL_MAX_PRICE_PER_TIB_MONTH is not set'
      expect((await testLink(says({ ...NOTHING_SAID, nextGroup: [{ route: 'market', copies: 0, why: off }] }))).nextGroup).toEqual([
        { route: 'the deal market', copies: 0, why: off },
      ])
      // A gateway that does not say (older, or CIDgravity's): nothing is made up.
      expect((await testLink(says(NOTHING_SAID))).nextGroup).toBeUndefined()
    })

    it("passes on the Onchain Cloud account's standing", async () => {
      const onchainCloud = { status: 'WARNING', funds: '12.5', fundedUntil: '2027-03-03T10:00:00.000Z' }
      const body = await testLink(says({ ...NOTHING_SAID, routes: { onchainCloud } }))
      expect(body).toMatchObject({ success: true, onchainCloud })
      expect(body.dealMarket).toBeUndefined()
    })

    it('warns when the gateway serves another network than the form names, and not when it says none', async () => {
      const body = await testLink(says({ ...NOTHING_SAID, network: 'calibration' }), { network: 'mainnet' })
      expect(body.warning).toBe(
        'The gateway serves the calibration network, but these settings say mainnet: dates and explorer links would be wrong',
      )
      expect((await testLink(says({ ...NOTHING_SAID, network: 'mainnet' }), { network: 'mainnet' })).warning).toBeUndefined()
      expect((await testLink(says(NOTHING_SAID), { network: 'calibration' })).warning).toBeUndefined()
    })

    it('asks it with the credentials of the probe', async () => {
      const seen: (string | undefined)[] = []
      await testLink(
        (req, res) => {
          seen.push(req.headers.authorization)
          says(NOTHING_SAID)(req, res)
        },
        { gatewayUser: 'svc', gatewayPassword: 'pw-123456' },
      )
      expect(seen).toEqual([basic('svc', 'pw-123456')])
      expect(probeAuth).toBe(basic('svc', 'pw-123456'))
    })

    const full = {
      network: 'calibration',
      deals: { blocked: true, blockedReason: 'no escrow', kind: { verified: false } },
      routes: { market: { dataCap: null, escrow: '0', locked: '0' } },
    }
    it.each<[string, Handler]>([
      // CIDgravity's gateway and other older ones: Express's own page, or a JSON 404.
      ['no such route (a page)', (_req, res) => void res.status(404).type('html').send('<pre>Cannot POST /status</pre>')],
      ['no such route (JSON)', (_req, res) => void res.status(404).json({ success: false, error: 'Not found' })],
      ['a refusal', (_req, res) => void res.status(401).json({ success: false, error: 'Authentication required' })],
      ['a failure', (_req, res) => void res.status(500).json({ success: false, error: 'Internal gateway error' })],
      ['a redirect', (_req, res) => void res.redirect(302, 'https://elsewhere.example.org/status')],
      ['a page with 200', (_req, res) => void res.type('html').send('<h1>Status: all good</h1>')],
      ['broken JSON', (_req, res) => void res.type('json').send('{"success":true,"result":')],
      ['a failure envelope with 200', (_req, res) => void res.json({ success: false, error: 'busy' })],
      ['an amount as a number', says({ ...full, routes: { market: { dataCap: null, escrow: 0.5, locked: '0' } } })],
      ['a negative DataCap', says({ ...full, routes: { market: { dataCap: '-1', escrow: '0', locked: '0' } } })],
      ['a time that is not one', says({ ...full, routes: { market: { dataCap: null, escrow: '1', locked: '0', dealsUntil: 'someday' } } })],
      [
        'an unknown standing',
        says({ ...full, routes: { onchainCloud: { status: 'FINE', funds: '1', fundedUntil: '2027-03-03T10:00:00.000Z' } } }),
      ],
      ['an unknown network', says({ ...full, network: 'testnet' })],
      ['blocked without a reason', says({ ...full, deals: { blocked: true } })],
      ['the status bare, without its envelope', (_req, res) => void res.json(full)],
      // Valid JSON, but over the 64 KiB read: it is not read to its end.
      [
        'an answer over 64 KiB',
        (_req, res) => void res.type('json').send(JSON.stringify({ success: true, result: full }) + ' '.repeat(70_000)),
      ],
    ])('still passes the link without those extras on %s', async (_what, handler) => {
      const body = await testLink(handler, { network: 'mainnet' })
      expect(body).toMatchObject({ success: true, status: 404, message: 'The gateway answered and accepted the credentials' })
      expect(extrasOf(body)).toEqual({})
      // The link itself is checked; no route's funds are claimed without the status that tells them.
      expect(body.checks).toEqual([
        { id: 'server-gateway', ok: true, sentence: expect.stringMatching(/^The bridge reaches the gateway at /) },
      ])
    })

    it('passes them all on from the same status when it is well formed', async () => {
      const body = await testLink(says(full), { network: 'mainnet' })
      expect(Object.keys(extrasOf(body)).sort()).toEqual(['dealKind', 'dealMarket', 'dealsWarning', 'warning'])
      // The link, then the deal market's funds as that status reports them.
      expect((body.checks as { id: string }[]).map((c) => c.id)).toEqual(['server-gateway', 'funds-market'])
    })

    it('waits for it no longer than the link timeout, and still passes the link', async () => {
      const quick = await startBridge(gateway.url, { gatewayTimeoutMs: 300 })
      try {
        answer = () => {} // never answers
        const started = Date.now()
        const res = await call(quick.url, TEST_LINK, { method: 'POST', body: {} })
        expect(res.body).toMatchObject({ success: true, status: 404 })
        expect(extrasOf(res.body)).toEqual({})
        expect(Date.now() - started).toBeLessThan(3_000)
      } finally {
        await quick.close()
      }
    })
  })

  it("reads the live gateway's own POST /status: without a deal engine it says nothing of deals or routes", async () => {
    const res = await call(t.url, TEST_LINK, { method: 'POST' })
    expect(res.body.success).toBe(true)
    for (const extra of ['warning', 'dealKind', 'dealsWarning', 'onchainCloud', 'dealMarket']) expect(res.body[extra]).toBeUndefined()
  })

  it('reports a dead gateway, wrong credentials and a non-gateway as failed tests, with HTTP 200', async () => {
    const dead = await call(t.url, TEST_LINK, { method: 'POST', body: { gatewayUrl: await deadUrl() } })
    expect(dead.status).toBe(200)
    expect(dead.body).toMatchObject({ success: false, status: 0 })

    const refused = await call(t.url, TEST_LINK, {
      method: 'POST',
      body: { gatewayUrl: t.gateway.url, gatewayUser: 'bridge', gatewayPassword: 'wrong-password' },
    })
    expect(refused.body).toMatchObject({ success: false, status: 401 })

    const notGateway = await startFakeGateway((app) =>
      app.post('/file-info', (_req, res) => void res.type('html').send('<h1>Welcome</h1>')),
    )
    try {
      const res = await call(t.url, TEST_LINK, { method: 'POST', body: { gatewayUrl: notGateway.url } })
      expect(res.body).toMatchObject({ success: false, status: 200 })
    } finally {
      await notGateway.close()
    }
    // Trying settings does not save them.
    expect((await call(t.url, SETTINGS)).body.settings.gatewayUrl).toBe('')
  })

  it('refuses bad test-link input with 400', async () => {
    expect((await call(t.url, TEST_LINK, { method: 'POST', body: { gatewayUrl: 'file:///etc/passwd' } })).status).toBe(400)
    expect((await call(t.url, TEST_LINK, { method: 'POST', body: { bogus: true } })).status).toBe(400)
  })
})

describe('saved settings across a restart', () => {
  it("keeps what the admin saved over the environment's defaults", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'bridge-settings-'))
    const config = {
      host: '127.0.0.1',
      port: 0,
      dataDir,
      network: 'mainnet' as const,
      simnetGenesis: 1704067200,
      gatewayUrl: 'http://127.0.0.1:9',
      gatewayTimeoutMs: 2000,
      adminPassword: ADMIN_PASSWORD,
      pathMap: '/{user}',
      ipfsGateway: 'https://ipfs.io',
    }
    try {
      for (const round of [1, 2]) {
        const bridge = await createBridge(config, { logger, print: () => {} })
        const server = await startServer(bridge.listener, 0)
        try {
          if (round === 1) {
            const res = await call(server.url, SETTINGS, {
              method: 'PUT',
              body: {
                gatewayUrl: 'https://gw.example.org',
                gatewayUser: 'svc',
                gatewayPassword: 'pw-123456',
                pathMap: '/mounts/{user}',
                network: 'calibration',
                ipfsGateway: '',
              },
            })
            expect(res.status).toBe(200)
          } else {
            const res = await call(server.url, SETTINGS)
            expect(res.body.settings).toEqual({
              gatewayUrl: 'https://gw.example.org',
              gatewayUser: 'svc',
              gatewayPasswordSet: true,
              pathMap: '/mounts/{user}',
              network: 'calibration',
              ipfsGateway: '',
              mounts: [],
            })
          }
        } finally {
          await server.close(50)
          await bridge.close()
        }
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})
