import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { aliceAuth, basic, ALICE, postMetadata, RECORDED_FILE_INFO, startBridge, startFakeGateway, type TestBridge } from './helpers.ts'

type Fake = Awaited<ReturnType<typeof startFakeGateway>>

describe('POST /ocs/v2.php/apps/gateway/get-file-metadata', () => {
  let gateway: Fake
  let t: TestBridge

  beforeAll(async () => {
    gateway = await startFakeGateway((app) => {
      app.post('/file-info', (req, res) => {
        const path = req.body?.filePath
        if (path === '/alice/docs/report.pdf' || path === '/alice/Фото/日本 €.png' || path === '/alice') {
          res.json(RECORDED_FILE_INFO)
        } else if (path === '/alice/cidgravity-missing.txt') {
          // The real CIDgravity gateway: 200 with success false.
          res.json({ success: false, error: 'file not found' })
        } else {
          res.status(404).json({ success: false, error: 'File or folder not found' })
        }
      })
    })
    t = await startBridge(gateway.url)
  })
  afterAll(async () => {
    await t.close()
    await gateway.close()
  })

  it("answers the converted record, bare, for the user's own file", async () => {
    const res = await postMetadata({ url: t.url })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      success: true,
      metadata: {
        file: {
          cid: RECORDED_FILE_INFO.result.file.cid,
          path: '/docs',
          file: 'report.pdf',
          details: {
            state: 'Partially offloaded',
            retrievableCopies: 1,
            expirationEpoch: 4_500_000,
            expirationTimestamp: 1598306400 + 4_500_000 * 30,
            groups: [{ ...RECORDED_FILE_INFO.result.file.details.groups[0], state: 'ready for deals' }],
          },
        },
      },
    })
    expect(gateway.requests.at(-1)).toMatchObject({
      method: 'POST',
      url: '/file-info',
      body: { filePath: '/alice/docs/report.pdf', verbose: true },
    })
  })

  it('accepts the WebDAV form of the path, URL-encoded', async () => {
    const res = await postMetadata({ url: t.url, body: { filePath: '/remote.php/dav/files/alice/docs//report.pdf' } })
    expect(res.status).toBe(200)
    expect(res.body.metadata.file).toMatchObject({ path: '/docs', file: 'report.pdf' })
  })

  it('handles unicode names, taken literally as the Files app sends them', async () => {
    const res = await postMetadata({ url: t.url, body: { filePath: '/Фото/日本 €.png' } })
    expect(res.status).toBe(200)
    expect(res.body.metadata.file).toMatchObject({ path: '/Фото', file: '日本 €.png' })
    // Percent-escapes are part of a name, never decoded again: this asks for another file.
    expect(gateway.requests.length).toBeGreaterThan(0)
    await postMetadata({ url: t.url, body: { filePath: encodeURI('/Фото/日本 €.png') } })
    expect(gateway.requests.at(-1)?.body).toEqual({ filePath: `/alice${encodeURI('/Фото/日本 €.png')}`, verbose: true })
  })

  it("aggregates the user's root folder", async () => {
    const res = await postMetadata({ url: t.url, body: { filePath: '/' } })
    expect(res.status).toBe(200)
    expect(gateway.requests.at(-1)?.body).toEqual({ filePath: '/alice', verbose: true })
  })

  it('works with an app password', async () => {
    const { token } = await t.bridge.users.createAppPassword('alice', 'sidebar')
    const res = await postMetadata({ url: t.url, auth: basic('alice', token) })
    expect(res.status).toBe(200)
    await t.bridge.users.revokeAppPasswords('alice')
  })

  it('answers 404 when the gateway does not know the file, in either way it says so', async () => {
    for (const filePath of ['/nothing-here.txt', '/cidgravity-missing.txt']) {
      const res = await postMetadata({ url: t.url, body: { filePath } })
      expect(res.status).toBe(404)
      expect(res.body).toMatchObject({ success: false })
      expect(typeof res.body.error).toBe('string')
    }
  })

  it("never reaches another user's files", async () => {
    const asked = gateway.requests.length
    const other = await postMetadata({ url: t.url, body: { filePath: '/remote.php/dav/files/bob/secret.txt' } })
    expect(other.status).toBe(404)
    const climb = await postMetadata({ url: t.url, body: { filePath: '/../bob/secret.txt' } })
    expect(climb.status).toBe(400)
    const encoded = await postMetadata({ url: t.url, body: { filePath: '/%2e%2e/bob/secret.txt' } })
    expect(encoded.status).toBe(400)
    expect(gateway.requests.length).toBe(asked)
    // A plain path is always inside alice's own folder.
    await postMetadata({ url: t.url, body: { filePath: '/bob/secret.txt' } })
    expect(gateway.requests.at(-1)?.body).toMatchObject({ filePath: '/alice/bob/secret.txt' })
  })

  describe('authentication', () => {
    it('answers 401 with a Basic challenge without credentials', async () => {
      const res = await postMetadata({ url: t.url, auth: null })
      expect(res.status).toBe(401)
      expect(res.headers.get('www-authenticate')).toMatch(/^Basic realm="Nextcloud"/)
      expect(res.body).toMatchObject({ success: false })
    })

    it('answers 401 for a wrong password, an unknown user or a malformed header', async () => {
      for (const auth of [basic('alice', 'wrong-password'), basic('nobody', 'whatever-pw'), 'Basic !!!', 'Bearer abc']) {
        const res = await postMetadata({ url: t.url, auth })
        expect(res.status).toBe(401)
        expect(res.body).toMatchObject({ success: false })
      }
    })

    it('checks credentials before CSRF and body', async () => {
      const res = await postMetadata({ url: t.url, auth: null, headers: { 'ocs-apirequest': 'false' }, raw: '{' })
      expect(res.status).toBe(401)
    })
  })

  it("answers Nextcloud's 412 without OCS-APIRequest", async () => {
    const res = await postMetadata({ url: t.url, headers: { 'ocs-apirequest': '' } })
    expect(res.status).toBe(412)
    expect(res.body).toEqual({ message: 'CSRF check failed' })
  })

  describe('bad bodies', () => {
    it.each([
      ['non-JSON', '{"filePath": '],
      ['a JSON array', '[]'],
      ['a JSON string', '"\\/docs"'],
      ['missing filePath', '{}'],
      ['empty filePath', '{"filePath": ""}'],
      ['filePath not a string', '{"filePath": 42}'],
      ['filePath null', '{"filePath": null}'],
      ['unknown fields', '{"filePath": "/docs/report.pdf", "user": "bob"}'],
      ['backslash', '{"filePath": "\\\\..\\\\bob"}'],
      ['NUL', '{"filePath": "/a\\u0000b"}'],
    ])('answers 400 for %s', async (_name, raw) => {
      const res = await postMetadata({ url: t.url, raw })
      expect(res.status).toBe(400)
      expect(res.body).toMatchObject({ success: false })
      expect(typeof res.body.error).toBe('string')
    })

    it('answers 400 for a wrong content type', async () => {
      const res = await postMetadata({ url: t.url, headers: { 'content-type': 'text/plain' } })
      expect(res.status).toBe(400)
      expect(res.body).toMatchObject({ success: false })
    })

    it('answers 415 in the envelope for a compressed body or a charset other than UTF-8', async () => {
      const gzipped = await postMetadata({ url: t.url, headers: { 'content-encoding': 'gzip' } })
      expect(gzipped.status).toBe(415)
      expect(gzipped.body).toMatchObject({ success: false, error: 'Request body encoding is not supported' })
      const latin1 = await postMetadata({ url: t.url, headers: { 'content-type': 'application/json; charset=iso-8859-1' } })
      expect(latin1.status).toBe(415)
      expect(latin1.body).toMatchObject({ success: false })
    })

    it('answers 400 for a body that is not valid UTF-8', async () => {
      const res = await fetch(`${t.url}/ocs/v2.php/apps/gateway/get-file-metadata`, {
        method: 'POST',
        headers: { authorization: aliceAuth, 'ocs-apirequest': 'true', 'content-type': 'application/json' },
        body: Buffer.concat([Buffer.from('{"filePath":"/docs/'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]),
      })
      expect(res.status).toBe(400)
      expect(await res.json()).toEqual({ success: false, error: 'Request body is not valid UTF-8' })
    })

    it('answers 413 in the envelope above 1 MiB', async () => {
      const raw = JSON.stringify({ filePath: '/a', pad: 'x'.repeat(1024 * 1024 + 10) })
      const res = await postMetadata({ url: t.url, raw })
      expect(res.status).toBe(413)
      expect(res.body).toMatchObject({ success: false })
    })
  })

  it('answers unknown endpoints with a 404 envelope', async () => {
    const res = await fetch(`${t.url}/ocs/v2.php/apps/gateway/nope`, { method: 'POST' })
    expect(res.status).toBe(404)
    expect(await res.json()).toMatchObject({ success: false })
  })

  it('serves the route with a query string, as OCS clients add ?format=json', async () => {
    const res = await fetch(`${t.url}/ocs/v2.php/apps/gateway/get-file-metadata?format=json`, {
      method: 'POST',
      headers: { authorization: aliceAuth, 'ocs-apirequest': 'true', 'content-type': 'application/json' },
      body: JSON.stringify({ filePath: '/docs/report.pdf' }),
    })
    expect(res.status).toBe(200)
    expect((await res.json()).metadata.file.file).toBe('report.pdf')
  })

  it('answers other methods on the route with the 404 envelope', async () => {
    const res = await fetch(`${t.url}/ocs/v2.php/apps/gateway/get-file-metadata`, {
      headers: { authorization: aliceAuth, 'ocs-apirequest': 'true' },
    })
    expect(res.status).toBe(404)
    expect(await res.json()).toEqual({ success: false, error: 'No such endpoint' })
  })

  it('refuses a header naming the user, before anything else', async () => {
    const res = await postMetadata({ url: t.url, auth: null, headers: { 'x-remote-user': 'alice' } })
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ success: false, error: expect.stringContaining('x-remote-user') })
  })

  it('logs no x-powered-by header', async () => {
    const res = await fetch(`${t.url}/status.php`)
    expect(res.headers.get('x-powered-by')).toBeNull()
  })
})

describe('login throttling', () => {
  let gateway: Fake
  let t: TestBridge
  beforeAll(async () => {
    gateway = await startFakeGateway((app) => app.post('/file-info', (_req, res) => res.json(RECORDED_FILE_INFO)))
    t = await startBridge(gateway.url)
  })
  afterAll(async () => {
    await t.close()
    await gateway.close()
  })

  it('answers 429 with Retry-After after repeated failures, even to the right password', async () => {
    for (let i = 0; i < 10; i++) {
      expect((await postMetadata({ url: t.url, auth: basic('alice', `wrong-${i}`) })).status).toBe(401)
    }
    const blocked = await postMetadata({ url: t.url, auth: basic('alice', 'wrong-again') })
    expect(blocked.status).toBe(429)
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(blocked.body).toMatchObject({ success: false })
    const right = await postMetadata({ url: t.url, auth: basic(ALICE.user, ALICE.password) })
    expect(right.status).toBe(429)
  })
})

describe('gateway failures', () => {
  const fakes: Fake[] = []
  const bridges: TestBridge[] = []
  afterAll(async () => {
    for (const b of bridges) await b.close()
    for (const f of fakes) await f.close()
  })
  const withGateway = async (setup: Parameters<typeof startFakeGateway>[0], timeoutMs = 5_000) => {
    const fake = await startFakeGateway(setup)
    fakes.push(fake)
    const t = await startBridge(fake.url, { gatewayTimeoutMs: timeoutMs })
    bridges.push(t)
    return t
  }

  it('answers 502 when the gateway is down', async () => {
    const gone = await startFakeGateway(() => {})
    await gone.close()
    const t = await startBridge(gone.url)
    bridges.push(t)
    const res = await postMetadata({ url: t.url })
    expect(res.status).toBe(502)
    expect(res.body).toMatchObject({ success: false })
  })

  it('answers 504 when the gateway is too slow', async () => {
    const t = await withGateway(
      (app) =>
        app.post('/file-info', (_req, res) => {
          setTimeout(() => res.json(RECORDED_FILE_INFO), 3_000).unref()
        }),
      200,
    )
    const res = await postMetadata({ url: t.url })
    expect(res.status).toBe(504)
    expect(res.body).toMatchObject({ success: false })
  })

  it.each([
    ['a body that is not JSON', (_req: unknown, res: any) => res.type('text/html').send('<html>Bad Gateway</html>')],
    ['an unexpected shape', (_req: unknown, res: any) => res.json({ success: true, result: { files: [] } })],
    ['a CID of the wrong type', (_req: unknown, res: any) => res.json({ success: true, result: { file: { cid: 42 } } })],
    ['a failure other than not found', (_req: unknown, res: any) => res.json({ success: false, error: 'database is locked' })],
    ['a 500', (_req: unknown, res: any) => res.status(500).json({ success: false, error: 'boom' })],
    [
      "a refusal of the bridge's credentials",
      (_req: unknown, res: any) => res.status(401).json({ success: false, error: 'Authentication required' }),
    ],
  ])('answers 502 when the gateway gives %s', async (_name, handler) => {
    const t = await withGateway((app) => app.post('/file-info', handler))
    const res = await postMetadata({ url: t.url })
    expect(res.status).toBe(502)
    expect(res.body).toMatchObject({ success: false })
  })

  it('tolerates extra fields and the CIDgravity spellings', async () => {
    const t = await withGateway((app) =>
      app.post('/file-info', (_req, res) =>
        res.json({
          success: true,
          requestId: 'abc',
          result: {
            file: {
              cid: 'bafy-quirky',
              extra: 1,
              details: {
                state: 'partially offloaded',
                retrievableCopies: '1',
                expriationEpoch: 4_000_000,
                groups: [
                  {
                    state: 'ready for deals',
                    retrievableCopies: 1,
                    deals: [{ provider: 'f01', state: 'active', dealId: '7', endEpoch: 4_000_000, isRetrievable: true }],
                  },
                ],
              },
            },
          },
        }),
      ),
    )
    const res = await postMetadata({ url: t.url })
    expect(res.status).toBe(200)
    expect(res.body.metadata.file.details).toMatchObject({
      state: 'Partially offloaded',
      retrievableCopies: 1,
      expirationEpoch: 4_000_000,
      groups: [{ state: 'ready for deals', deals: [{ dealId: 7 }] }],
    })
  })

  it('sends the gateway service account credentials', async () => {
    let seen: string | undefined
    const fake = await startFakeGateway((app) =>
      app.post('/file-info', (req, res) => {
        seen = req.headers.authorization
        res.json(RECORDED_FILE_INFO)
      }),
    )
    fakes.push(fake)
    const t = await startBridge(fake.url, { gatewayUser: 'bridge', gatewayPassword: 's3cret' })
    bridges.push(t)
    expect((await postMetadata({ url: t.url })).status).toBe(200)
    expect(seen).toBe(basic('bridge', 's3cret'))
  })
})
