import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createBridge } from '../../server/bridge/index.ts'
import { startServer } from '../../server/shared/http.ts'
import { ADMIN_PASSWORD, aliceAuth, basic, logger, postMetadata, startBridgeOnRealGateway, startFakeGateway } from './helpers.ts'

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

  it('tells any logged-in user the network, IPFS gateway and genesis, following the saved network', async () => {
    const before = await call(t.url, CONFIG, { auth: aliceAuth })
    expect(before.status).toBe(200)
    expect(before.body).toEqual({
      success: true,
      config: { network: 'mainnet', ipfsGateway: 'https://ipfs.io', genesisTimestamp: 1598306400, epochSeconds: 30 },
    })
    await call(t.url, SETTINGS, { method: 'PUT', body: { ...valid, network: 'calibration', ipfsGateway: 'https://dweb.link/' } })
    const after = await call(t.url, CONFIG, { auth: aliceAuth })
    expect(after.body.config).toEqual({
      network: 'calibration',
      ipfsGateway: 'https://dweb.link',
      genesisTimestamp: 1667326380,
      epochSeconds: 30,
    })
    expect((await call(t.url, CONFIG, { auth: null })).status).toBe(401)
    await call(t.url, SETTINGS, { method: 'PUT', body: valid })
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

  it('passes on which deals the gateway proposes (its Filecoin-Deal-Kind header)', async () => {
    const kind = 'unverified: Fil+ ended at network version 29 (FIP-0118): deals are unverified, no DataCap is needed'
    const gateway = await startFakeGateway((app) =>
      app.post(
        '/file-info',
        (_req, res) =>
          void res
            .status(404)
            .set('Filecoin-Deal-Kind', kind)
            .json({ success: false, error: { code: 'NOT_FOUND', message: 'no such file' } }),
      ),
    )
    try {
      const res = await call(t.url, TEST_LINK, { method: 'POST', body: { gatewayUrl: gateway.url } })
      expect(res.body).toMatchObject({ success: true, dealKind: `The gateway proposes ${kind}` })
    } finally {
      await gateway.close()
    }
  })

  it("passes on what pays for the deal market's copies (its Filecoin-Deal-Market header), and leaves out an odd one", async () => {
    let header = 'datacap=34359738368; escrow=0.5; locked=0.125; deals-until=2028-03-03T10:00:00.000Z'
    const gateway = await startFakeGateway((app) =>
      app.post(
        '/file-info',
        (_req, res) =>
          void res
            .status(404)
            .set('Filecoin-Deal-Market', header)
            .json({ success: false, error: { code: 'NOT_FOUND', message: 'no such file' } }),
      ),
    )
    try {
      const ask = () => call(t.url, TEST_LINK, { method: 'POST', body: { gatewayUrl: gateway.url } })
      expect((await ask()).body).toMatchObject({
        success: true,
        dealMarket: { dataCap: '34359738368', escrow: '0.5', locked: '0.125', dealsUntil: '2028-03-03T10:00:00.000Z' },
      })
      // Not a verified client, and nothing stored yet.
      header = 'datacap=none; escrow=0; locked=0'
      const plain = (await ask()).body
      expect(plain.dealMarket).toEqual({ dataCap: null, escrow: '0', locked: '0' })
      for (const odd of [
        'datacap=-1; escrow=0; locked=0',
        'datacap=none; escrow=lots; locked=0',
        'datacap=none; escrow=1; locked=0; deals-until=someday',
        'escrow=1; locked=0',
        'verified',
      ]) {
        header = odd
        const oddRes = await ask()
        expect(oddRes.body.success).toBe(true)
        expect(oddRes.body.dealMarket).toBeUndefined()
      }
    } finally {
      await gateway.close()
    }
  })

  it("passes on the Onchain Cloud account's standing (its Filecoin-Onchain-Cloud header), and leaves out an odd one", async () => {
    let header = 'status=WARNING; funds=12.5; funded-until=2027-03-03T10:00:00.000Z'
    const gateway = await startFakeGateway((app) =>
      app.post(
        '/file-info',
        (_req, res) =>
          void res
            .status(404)
            .set('Filecoin-Onchain-Cloud', header)
            .json({ success: false, error: { code: 'NOT_FOUND', message: 'no such file' } }),
      ),
    )
    try {
      const res = await call(t.url, TEST_LINK, { method: 'POST', body: { gatewayUrl: gateway.url } })
      expect(res.body).toMatchObject({
        success: true,
        onchainCloud: { status: 'WARNING', funds: '12.5', fundedUntil: '2027-03-03T10:00:00.000Z' },
      })
      for (const odd of [
        'status=FINE; funds=1; funded-until=2027-03-03T10:00:00.000Z',
        'status=HEALTHY; funds=lots; funded-until=2027-03-03',
        'status=HEALTHY; funds=1; funded-until=someday',
        'HEALTHY',
      ]) {
        header = odd
        const oddRes = await call(t.url, TEST_LINK, { method: 'POST', body: { gatewayUrl: gateway.url } })
        expect(oddRes.body.success).toBe(true)
        expect(oddRes.body.onchainCloud).toBeUndefined()
      }
    } finally {
      await gateway.close()
    }
  })

  it('passes on why the gateway proposes no deals (its Filecoin-Deals-Blocked header)', async () => {
    const reason = 't1abc has no DataCap: it is not a verified client, so its verified deals would be refused'
    const blocked = await startFakeGateway((app) =>
      app.post(
        '/file-info',
        (_req, res) =>
          void res
            .status(404)
            .set('Filecoin-Deals-Blocked', reason)
            .json({ success: false, error: { code: 'NOT_FOUND', message: 'no such file' } }),
      ),
    )
    try {
      const res = await call(t.url, TEST_LINK, { method: 'POST', body: { gatewayUrl: blocked.url } })
      expect(res.body).toMatchObject({ success: true, dealsWarning: `The gateway proposes no deals: ${reason}` })
    } finally {
      await blocked.close()
    }
    // The embedded gateway makes deals: no such warning.
    expect((await call(t.url, TEST_LINK, { method: 'POST' })).body.dealsWarning).toBeUndefined()
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
