/**
 * FILESYNC=appapi against a fake Nextcloud that replays AppAPI's request
 * shapes, read from nextcloud/app_api (main, for Nextcloud 35; the same on
 * stable33 and stable34):
 * - what AppAPI sends the ExApp: lib/Service/AppAPIService.php (heartbeatExApp:
 *   GET /heartbeat with only Accept/Content-Type; dispatchExAppInitInternal:
 *   POST /init; enableExApp/disableExApp: PUT /enabled?enabled=1|0) with the
 *   headers of lib/Service/AppAPICommonService.php (buildAppAPIAuthHeaders:
 *   AA-VERSION, EX-APP-ID, EX-APP-VERSION, AUTHORIZATION-APP-API =
 *   base64("userid:secret"), AA-REQUEST-ID);
 * - what the ExApp sends AppAPI: appinfo/routes.php ('ocs': PUT /ex-app/status,
 *   POST /api/v2/ui/files-actions-menu, DELETE /api/v1/ui/files-actions-menu)
 *   and lib/Controller/OCSUiController.php / OCSApiController.php (parameters);
 * - AppAPI's Files plugin posting `{ files: [nodeInfo] }` to a v2 action's
 *   handler: src/filesplugin.js (buildNodeInfo);
 * - WebDAV with AUTHORIZATION-APP-API for a user: lib/DavPlugin.php.
 * Not run: a real Nextcloud with AppAPI.
 */
import express from 'express'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { sameSecret } from '../../server/bridge/exapp/auth.ts'
import { createSettingsStore } from '../../server/bridge/settings-store.ts'
import { startServer, type RunningServer } from '../../server/shared/http.ts'
import { openSql, type Sql } from '../../server/shared/sql/index.ts'
import { RECORDED_FILE_INFO, startBridge, startFakeGateway, type TestBridge } from './helpers.ts'
import { MOUNTS } from './nextcloud-helpers.ts'

const SECRET = 'a-secret-as-long-as-appapi-would-make-it-0123456789abcdef'
const APP_ENV = { APP_ID: 'gateway', APP_SECRET: SECRET, APP_VERSION: '0.1.0', APP_PORT: '23000' }
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64')
/** buildAppAPIAuthHeaders as AppAPI sends them; `user` '' for AppAPI's own calls. */
const appApi = (user: string, secret = SECRET, appId = 'gateway') => ({
  'AA-VERSION': '35.0.0',
  'EX-APP-ID': appId,
  'EX-APP-VERSION': '0.1.0',
  'AUTHORIZATION-APP-API': b64(`${user}:${secret}`),
  'AA-REQUEST-ID': 'CLI',
})

interface Seen {
  method: string
  url: string
  headers: Record<string, unknown>
  body: unknown
}

describe('FILESYNC=appapi: the app surface as an AppAPI external app', () => {
  let nextcloud: RunningServer
  const seen: Seen[] = []
  /** The OCS status the fake answers AppAPI's UI routes with (400: AppAPI refused the registration). */
  let uiStatus = 200
  let gateway: Awaited<ReturnType<typeof startFakeGateway>>
  let t: TestBridge
  let sql: Sql
  let dir: string

  beforeAll(async () => {
    const app = express()
    app.use(express.json())
    app.use((req, _res, next) => {
      seen.push({ method: req.method, url: req.originalUrl, headers: { ...req.headers }, body: req.body })
      next()
    })
    app.use('/ocs/v1.php/apps/app_api/api', (_req, res) => {
      res.status(uiStatus).json({ ocs: { meta: { status: uiStatus === 200 ? 'ok' : 'failure', statuscode: uiStatus }, data: [] } })
    })
    app.put('/ocs/v1.php/apps/app_api/ex-app/status', (_req, res) => {
      res.json({ ocs: { meta: { status: 'ok', statuscode: 200 }, data: [] } })
    })
    // AppAPI's DAV plugin: the user of AUTHORIZATION-APP-API, if the secret is the app's.
    app.use('/remote.php/dav/files/:user', (req, res) => {
      const [user, secret] = Buffer.from(String(req.headers['authorization-app-api'] ?? ''), 'base64')
        .toString()
        .split(':')
      if (user !== req.params.user || secret !== SECRET || req.headers['ex-app-id'] !== 'gateway') return void res.status(401).end()
      const href = req.originalUrl
      res
        .status(207)
        .type('application/xml; charset=utf-8')
        .send(
          `<?xml version="1.0"?><d:multistatus xmlns:d="DAV:"><d:response><d:href>${href}</d:href><d:propstat><d:prop><d:resourcetype/></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response></d:multistatus>`,
        )
    })
    nextcloud = await startServer(app, 0)
    gateway = await startFakeGateway((g) => {
      g.post('/file-info', (req, res) => {
        if (req.body?.filePath === '/alice/docs/report.pdf') res.json(RECORDED_FILE_INFO)
        else res.status(404).json({ success: false, error: 'File or folder not found' })
      })
    })
    // The mounts as an admin saved them before (settings live in the bridge's store).
    dir = mkdtempSync(join(tmpdir(), 'exapp-test-'))
    sql = await openSql({ file: join(dir, 'app.sqlite'), schema: 'bridge' })
    const config = { host: '127.0.0.1', port: 0, dataDir: dir, network: 'mainnet', simnetGenesis: 1704067200, gatewayUrl: gateway.url }
    const store = await createSettingsStore(sql, {
      ...config,
      gatewayTimeoutMs: 5_000,
      pathMap: '/{user}',
      ipfsGateway: 'https://ipfs.io',
    } as never)
    await store.save({ ...store.get(), mounts: MOUNTS })
    store.close()
    t = await startBridge(
      gateway.url,
      { filesync: 'appapi', nextcloudUrl: nextcloud.url, nextcloudTimeoutMs: 2_000 },
      { sql, env: { ...APP_ENV, NEXTCLOUD_URL: nextcloud.url } },
    )
  })
  afterAll(async () => {
    await t?.close()
    await gateway?.close()
    await nextcloud?.close()
    await sql?.close()
    rmSync(dir, { recursive: true, force: true })
  })
  beforeEach(() => {
    seen.length = 0
    uiStatus = 200
  })

  const toAppApi = (path: string) => seen.filter((s) => s.url.startsWith(`/ocs/v1.php/apps/app_api${path}`))

  it('answers the heartbeat without authentication, as AppAPI asks it', async () => {
    const res = await fetch(`${t.url}/heartbeat`, { headers: { accept: 'application/json', 'content-type': 'application/json' } })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ status: 'ok' })
  })

  it("serves the action's icon as SVG, which AppAPI's Files plugin requires", async () => {
    const res = await fetch(`${t.url}/img/app.svg`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^image\/svg\+xml/)
    expect(await res.text()).toMatch(/^<svg [\s\S]*<\/svg>\n$/)
  })

  it('on /init registers the Files action through AppAPI, then reports 100 %', async () => {
    const res = await fetch(`${t.url}/init`, { method: 'POST', headers: appApi('') })
    expect(res.status).toBe(200)
    await vi.waitFor(() => expect(toAppApi('/ex-app/status').map((s) => s.body)).toContainEqual({ progress: 100 }), { timeout: 5_000 })
    const [action] = toAppApi('/api/v2/ui/files-actions-menu')
    expect(action.method).toBe('POST')
    expect(action.body).toEqual({
      name: 'gateway-filecoin-state',
      displayName: 'Filecoin state',
      actionHandler: 'exapp/file-action',
      icon: 'img/app.svg',
      mime: 'file',
      permissions: 1,
      order: 90,
    })
    // Each call back carries AppAPI's headers with this app's secret and no user, and asks for OCS.
    for (const call of [action, ...toAppApi('/ex-app/status')]) {
      expect(call.headers).toMatchObject({
        'ex-app-id': 'gateway',
        'ex-app-version': '0.1.0',
        'aa-version': '35.0.0',
        'authorization-app-api': b64(`:${SECRET}`),
        'ocs-apirequest': 'true',
      })
    }
    // The progress went 0 → 100, in that order.
    expect(toAppApi('/ex-app/status').map((s) => (s.body as { progress: number }).progress)).toEqual([0, 100])
  })

  it('reports why /init failed when AppAPI refuses the registration', async () => {
    uiStatus = 400
    expect((await fetch(`${t.url}/init`, { method: 'POST', headers: appApi('') })).status).toBe(200)
    await vi.waitFor(() => expect(toAppApi('/ex-app/status')).toHaveLength(2), { timeout: 5_000 })
    expect(toAppApi('/ex-app/status')[1].body).toEqual({
      progress: 0,
      error: expect.stringMatching(/could not register with AppAPI: AppAPI answered 400 to POST .*files-actions-menu/),
    })
  })

  it('refuses AppAPI calls without its headers, with another secret or for another app: 401 in the envelope, nothing done', async () => {
    const { 'AA-VERSION': _dropped, ...withoutVersion } = appApi('')
    for (const headers of [{}, appApi('', 'wrong-secret'), appApi('', `${SECRET}x`), appApi('', SECRET, 'other_app'), withoutVersion]) {
      for (const [method, path] of [
        ['POST', '/init'],
        ['PUT', '/enabled?enabled=1'],
      ]) {
        const res = await fetch(`${t.url}${path}`, { method, headers })
        expect(res.status, `${method} ${path} ${JSON.stringify(headers)}`).toBe(401)
        const body = await res.json()
        expect(body).toEqual({
          success: false,
          error: expect.stringMatching(/AppAPI authentication required|secret|This ExApp is gateway/),
        })
        expect(JSON.stringify(body)).not.toContain(SECRET)
        expect(res.headers.get('www-authenticate')).toBeNull()
      }
    }
    const garbled = await fetch(`${t.url}/init`, { method: 'POST', headers: { ...appApi(''), 'AUTHORIZATION-APP-API': 'not base64!' } })
    expect(garbled.status).toBe(401)
    // Refused before the work starts: nothing was (or will be) sent to AppAPI.
    expect(toAppApi('')).toEqual([])
  })

  it('registers the action on enabled=1, removes it on enabled=0, and says why when AppAPI refuses', async () => {
    const on = await fetch(`${t.url}/enabled?enabled=1`, { method: 'PUT', headers: appApi('') })
    expect(await on.json()).toEqual({ error: '' })
    const off = await fetch(`${t.url}/enabled?enabled=0`, { method: 'PUT', headers: appApi('') })
    expect(await off.json()).toEqual({ error: '' })
    expect(toAppApi('/api/').map((s) => [s.method, s.url, s.body])).toEqual([
      ['POST', '/ocs/v1.php/apps/app_api/api/v2/ui/files-actions-menu', expect.objectContaining({ name: 'gateway-filecoin-state' })],
      ['DELETE', '/ocs/v1.php/apps/app_api/api/v1/ui/files-actions-menu', { name: 'gateway-filecoin-state' }],
    ])
    uiStatus = 500
    const refused = await fetch(`${t.url}/enabled?enabled=1`, { method: 'PUT', headers: appApi('') })
    expect(refused.status).toBe(200)
    expect((await refused.json()).error).toMatch(/AppAPI answered 500/)
    const bad = await fetch(`${t.url}/enabled?enabled=yes`, { method: 'PUT', headers: appApi('') })
    expect(bad.status).toBe(400)
    expect(await bad.json()).toEqual({ success: false, error: 'enabled must be 0 or 1' })
  })

  it("answers a user's metadata request behind AppAPI's proxy, checking the path with Nextcloud as that user", async () => {
    const res = await fetch(`${t.url}/ocs/v2.php/apps/gateway/get-file-metadata`, {
      method: 'POST',
      headers: { ...appApi('alice'), 'ocs-apirequest': 'true', 'content-type': 'application/json' },
      body: JSON.stringify({ filePath: '/Filecoin/docs/report.pdf' }),
    })
    expect(res.status).toBe(200)
    expect((await res.json()).metadata.file).toMatchObject({ cid: RECORDED_FILE_INFO.result.file.cid, file: 'report.pdf' })
    const propfind = seen.find((s) => s.method === 'PROPFIND')!
    expect(propfind.url).toBe('/remote.php/dav/files/alice/Filecoin/docs/report.pdf')
    expect(propfind.headers['authorization-app-api']).toBe(b64(`alice:${SECRET}`))
    expect(gateway.requests.at(-1)?.body).toMatchObject({ filePath: '/alice/docs/report.pdf' })
  })

  it('refuses a user request with a wrong secret or without a user (401), and never asks the gateway', async () => {
    const before = gateway.requests.length
    for (const headers of [appApi('alice', 'wrong-secret'), appApi('')]) {
      const res = await fetch(`${t.url}/ocs/v2.php/apps/gateway/get-file-metadata`, {
        method: 'POST',
        headers: { ...headers, 'ocs-apirequest': 'true', 'content-type': 'application/json' },
        body: JSON.stringify({ filePath: '/Filecoin/docs/report.pdf' }),
      })
      expect(res.status).toBe(401)
      expect(await res.json()).toMatchObject({ success: false })
    }
    expect(gateway.requests.length).toBe(before)
  })

  it("answers the Files action with each file's state, or why there is none", async () => {
    const node = (name: string, directory: string, fileId: number) => ({
      fileId,
      name,
      directory,
      etag: 'e',
      mime: 'application/pdf',
      favorite: 'false',
      permissions: 27,
      fileType: 'file',
      size: 10,
      mtime: 1,
      userId: 'alice',
      instanceId: 'oc1',
    })
    const res = await fetch(`${t.url}/exapp/file-action`, {
      method: 'POST',
      headers: { ...appApi('alice'), 'content-type': 'application/json' },
      body: JSON.stringify({ files: [node('report.pdf', '/Filecoin/docs', 12), node('notes.txt', '/Private', 13)] }),
    })
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body.files[0]).toMatchObject({ fileId: 12, path: '/Filecoin/docs/report.pdf', cid: RECORDED_FILE_INFO.result.file.cid })
    expect(typeof body.files[0].state).toBe('string')
    expect(body.files[1]).toMatchObject({ fileId: 13, error: { code: 'NOT_ON_MOUNT' } })

    const empty = await fetch(`${t.url}/exapp/file-action`, {
      method: 'POST',
      headers: { ...appApi('alice'), 'content-type': 'application/json' },
      body: JSON.stringify({ files: [] }),
    })
    expect(empty.status).toBe(400)
    const anonymous = await fetch(`${t.url}/exapp/file-action`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ files: [node('report.pdf', '/Filecoin/docs', 12)] }),
    })
    expect(anonymous.status).toBe(401)
  })
})

describe('the secret comparison', () => {
  it('is equal only for the same secret, whatever the lengths', () => {
    expect(sameSecret(SECRET, SECRET)).toBe(true)
    expect(sameSecret(SECRET.slice(0, -1), SECRET)).toBe(false)
    expect(sameSecret(`${SECRET}x`, SECRET)).toBe(false)
    expect(sameSecret('', SECRET)).toBe(false)
  })
})
