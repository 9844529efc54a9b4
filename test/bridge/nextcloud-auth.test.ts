import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { request as httpRequest } from 'node:http'
import { basic, postMetadata, RECORDED_FILE_INFO } from './helpers.ts'
import { captureLogger, MOUNTS, NC_ALICE, NC_BOB, ncAdmin, ncAlice, startNextcloudSetup } from './nextcloud-helpers.ts'

type Setup = Awaited<ReturnType<typeof startNextcloudSetup>>

const session = (s: { cookie: string; requestToken: string }) => ({ cookie: s.cookie, requesttoken: s.requestToken })

describe('FILESYNC=nextcloud: logins checked by Nextcloud', () => {
  let t: Setup
  const log = captureLogger()
  beforeAll(async () => {
    t = await startNextcloudSetup({}, { logger: log.logger, nextcloudCacheMs: 0, throttle: { maxFailures: 50 } })
  })
  afterAll(() => t.close())
  afterEach(() => {
    t.nextcloud.maintenance = false
  })

  it('answers a user with basic auth (password or app password) from their mount', async () => {
    const res = await postMetadata({ url: t.url, auth: ncAlice, body: { filePath: '/Filecoin/docs/report.pdf' } })
    expect(res.status).toBe(200)
    expect(res.body.metadata.file).toMatchObject({ cid: RECORDED_FILE_INFO.result.file.cid, path: '/Filecoin/docs', file: 'report.pdf' })
    expect(t.gateway.requests.at(-1)?.body).toMatchObject({ filePath: '/alice/docs/report.pdf' })
    // Nextcloud was asked with the caller's own header and the OCS header.
    const check = t.nextcloud.seen.filter((r) => r.url.startsWith('/ocs/v2.php/cloud/user')).at(-1)!
    expect(check.url).toBe('/ocs/v2.php/cloud/user?format=json')
    expect(check.headers).toMatchObject({ authorization: ncAlice, 'ocs-apirequest': 'true' })
  })

  it('answers the Files UI with the session cookie and requesttoken', async () => {
    const s = t.nextcloud.login('alice')
    const res = await postMetadata({ url: t.url, auth: null, headers: session(s), body: { filePath: '/Team/plan.txt' } })
    expect(res.status).toBe(200)
    expect(t.gateway.requests.at(-1)?.body).toMatchObject({ filePath: '/shared/plan.txt' })
    const propfind = t.nextcloud.seen.filter((r) => r.method === 'PROPFIND').at(-1)!
    expect(propfind.url).toBe('/remote.php/dav/files/alice/Team/plan.txt')
    expect(propfind.headers).toMatchObject({ cookie: s.cookie, requesttoken: s.requestToken, depth: '0' })
  })

  it('answers 401 for a wrong password, with a Basic challenge', async () => {
    const res = await postMetadata({ url: t.url, auth: basic('alice', 'wrong'), body: { filePath: '/Filecoin/docs/report.pdf' } })
    expect(res.status).toBe(401)
    expect(res.body).toMatchObject({ success: false })
    expect(res.headers.get('www-authenticate')).toMatch(/^Basic/)
  })

  it('answers 401 for an expired, forged or replayed session, without a Basic challenge', async () => {
    const expired = t.nextcloud.login('alice')
    t.nextcloud.sessions.get(expired.id)!.expired = true
    const forged = { cookie: 'ocstandin42=forged-session-id', requestToken: 'whatever' }
    const replayed = t.nextcloud.login('alice')
    expect((await postMetadata({ url: t.url, auth: null, headers: session(replayed), body: { filePath: '/Team/plan.txt' } })).status).toBe(
      200,
    )
    t.nextcloud.sessions.delete(replayed.id) // logged out in Nextcloud
    for (const s of [expired, forged, replayed]) {
      const res = await postMetadata({ url: t.url, auth: null, headers: session(s), body: { filePath: '/Team/plan.txt' } })
      expect(res.status).toBe(401)
      expect(res.body).toMatchObject({ success: false })
      expect(res.headers.get('www-authenticate')).toBeNull()
    }
  })

  it('refuses a session cookie without its requesttoken (412) and a requesttoken without a session (401), without asking Nextcloud', async () => {
    const s = t.nextcloud.login('alice')
    const before = t.userChecks()
    const noToken = await postMetadata({ url: t.url, auth: null, headers: { cookie: s.cookie }, body: { filePath: '/Team/plan.txt' } })
    expect(noToken.status).toBe(412)
    expect(noToken.body).toEqual({ message: 'CSRF check failed' })
    const noCookie = await postMetadata({
      url: t.url,
      auth: null,
      headers: { requesttoken: s.requestToken },
      body: { filePath: '/Team/plan.txt' },
    })
    expect(noCookie.status).toBe(401)
    expect(t.userChecks()).toBe(before)
    expect(log.lines.some((l) => l.includes('requesttoken without a session cookie'))).toBe(true)
  })

  it("refuses a session whose requesttoken Nextcloud's WebDAV rejects", async () => {
    const s = t.nextcloud.login('alice')
    const before = t.gateway.requests.length
    const res = await postMetadata({
      url: t.url,
      auth: null,
      headers: { cookie: s.cookie, requesttoken: 'stolen-cookie-but-no-token' },
      body: { filePath: '/Team/plan.txt' },
    })
    expect(res.status).toBe(401)
    expect(t.gateway.requests.length).toBe(before)
  })

  it('answers 503, not 401, when Nextcloud is in maintenance mode', async () => {
    t.nextcloud.maintenance = true
    const res = await postMetadata({ url: t.url, auth: ncAlice, body: { filePath: '/Filecoin/docs/report.pdf' } })
    expect(res.status).toBe(503)
    expect(res.body.success).toBe(false)
    expect(res.body.error).toMatch(/maintenance/i)
  })

  it('refuses paths outside every mapped mount with 404, without asking the gateway', async () => {
    const before = t.gateway.requests.length
    const res = await postMetadata({ url: t.url, auth: ncAlice, body: { filePath: '/Documents/private.txt' } })
    expect(res.status).toBe(404)
    expect(res.body).toMatchObject({ success: false })
    expect(res.body.error).toMatch(/mount/)
    expect(t.gateway.requests.length).toBe(before)
  })

  it("answers 404 for a path on a mount that is not in the user's Nextcloud tree (another user's file)", async () => {
    const before = t.gateway.requests.length
    // Bob's file exists on the gateway under /bob; for alice, /Filecoin/bob-only.txt is /alice/bob-only.txt and not hers.
    for (const filePath of ['/Filecoin/bob-only.txt', '/remote.php/dav/files/bob/Filecoin/bob-only.txt']) {
      const res = await postMetadata({ url: t.url, auth: ncAlice, body: { filePath } })
      expect(res.status).toBe(404)
      expect(JSON.stringify(res.body)).not.toContain('bafk')
    }
    expect(t.gateway.requests.length).toBe(before)
  })

  it('refuses headers that try to name another user, and logs it', async () => {
    for (const header of ['x-forwarded-user', 'x-remote-user', 'oc-user', 'remote-user']) {
      const before = t.userChecks()
      const res = await postMetadata({
        url: t.url,
        auth: ncAlice,
        headers: { [header]: 'bob' },
        body: { filePath: '/Filecoin/bob-only.txt' },
      })
      expect(res.status).toBe(400)
      expect(res.body).toMatchObject({ success: false })
      expect(JSON.stringify(res.body)).not.toContain('bafk')
      expect(t.userChecks()).toBe(before)
      expect(log.lines.some((l) => l.includes('identity header') && l.includes(header))).toBe(true)
    }
  })

  it('never logs the secrets it forwards', () => {
    const all = log.lines.join('\n')
    expect(all).not.toContain(NC_ALICE.password)
    expect(all).not.toContain(ncAlice.slice(6))
  })

  it("serves only the app's OCS routes: Nextcloud owns files, status and logins", async () => {
    for (const [method, path] of [
      ['PROPFIND', '/remote.php/dav/files/alice/'],
      ['GET', '/status.php'],
      ['GET', '/ocs/v2.php/cloud/user'],
      ['GET', '/'],
      ['POST', '/login'],
      ['MKCOL', '/remote.php/dav/uploads/alice/x'],
    ]) {
      const res = await fetch(`${t.url}${path}`, { method, headers: { authorization: ncAlice } })
      expect(res.status, `${method} ${path}`).toBe(404)
    }
    const config = await fetch(`${t.url}/ocs/v2.php/apps/gateway/config`, { headers: { authorization: ncAlice, 'ocs-apirequest': 'true' } })
    expect(config.status).toBe(200)
  })

  it("answers 431 in the envelope, not 500, for headers over Node's 16 KiB limit", async () => {
    const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const u = new URL(t.url)
      const req = httpRequest(
        {
          hostname: u.hostname,
          port: u.port,
          method: 'POST',
          path: '/ocs/v2.php/apps/gateway/get-file-metadata',
          headers: { cookie: 'a=' + 'x'.repeat(20_000), 'ocs-apirequest': 'true' },
        },
        (res) => {
          let text = ''
          res.on('data', (c) => (text += c))
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }))
        },
      )
      req.on('error', reject)
      req.end()
    })
    expect(status).toBe(431)
    expect(JSON.parse(body)).toMatchObject({ success: false })
    expect(log.lines.some((l) => l.includes('request headers too large'))).toBe(true)
  })
})

describe('FILESYNC=nextcloud: admin rights come from Nextcloud', () => {
  let t: Setup
  beforeAll(async () => {
    t = await startNextcloudSetup()
  })
  afterAll(() => t.close())
  const settings = (auth: string, init: RequestInit = {}) =>
    fetch(`${t.url}/ocs/v2.php/apps/gateway/admin/settings`, {
      ...init,
      headers: { authorization: auth, 'ocs-apirequest': 'true', 'content-type': 'application/json' },
    })

  it("lets a member of Nextcloud's admin group read the mounts, and nobody else", async () => {
    const admin = await settings(ncAdmin)
    expect(admin.status).toBe(200)
    expect(((await admin.json()) as any).settings.mounts).toEqual(MOUNTS)
    expect((await settings(ncAlice)).status).toBe(403)
  })

  it('refuses mounts that could step outside or clash, naming the field', async () => {
    const base = { gatewayUrl: '', gatewayUser: '', pathMap: '/{user}', network: 'mainnet', ipfsGateway: '' }
    for (const mounts of [
      [{ mountPoint: '/', gatewayPath: '/{user}' }],
      [{ mountPoint: '/a/../b', gatewayPath: '/{user}' }],
      [{ mountPoint: '/Filecoin', gatewayPath: '/../etc' }],
      [{ mountPoint: '/Filecoin', gatewayPath: '/{owner}' }],
      [
        { mountPoint: '/A', gatewayPath: '/x' },
        { mountPoint: '/A/', gatewayPath: '/y' },
      ],
      [{ mountPoint: 'Filecoin', gatewayPath: '/x' }],
    ]) {
      const res = await settings(ncAdmin, { method: 'PUT', body: JSON.stringify({ ...base, mounts }) })
      expect(res.status, JSON.stringify(mounts)).toBe(400)
      expect(((await res.json()) as any).error).toMatch(/^mounts/)
    }
  })

  it('caches a login Nextcloud accepted briefly, never a failure', async () => {
    const before = t.userChecks()
    const bob = basic(NC_BOB.id, NC_BOB.password)
    for (let i = 0; i < 3; i++)
      expect((await postMetadata({ url: t.url, auth: bob, body: { filePath: '/Filecoin/bob-only.txt' } })).status).toBe(200)
    expect(t.userChecks() - before).toBe(1)
    for (let i = 0; i < 2; i++)
      expect(
        (await postMetadata({ url: t.url, auth: basic('alice', 'nope'), body: { filePath: '/Filecoin/docs/report.pdf' } })).status,
      ).toBe(401)
    expect(t.userChecks() - before).toBe(3)
  })
})

describe('FILESYNC=nextcloud: when Nextcloud is unwell', () => {
  it('answers 503, not 401, when Nextcloud is too slow or down', async () => {
    const t = await startNextcloudSetup({ nextcloudTimeoutMs: 300 })
    try {
      t.nextcloud.hang = true
      const slow = await postMetadata({ url: t.url, auth: ncAlice, body: { filePath: '/Filecoin/docs/report.pdf' } })
      expect(slow.status).toBe(503)
      expect(slow.body).toMatchObject({ success: false })
      t.nextcloud.hang = false
      await t.nextcloud.close()
      const down = await postMetadata({ url: t.url, auth: basic(NC_BOB.id, NC_BOB.password), body: { filePath: '/Filecoin/x' } })
      expect(down.status).toBe(503)
      expect(down.body).toMatchObject({ success: false })
    } finally {
      await t.close()
    }
  })

  it('answers 429 after repeated failures, before asking Nextcloud again', async () => {
    const t = await startNextcloudSetup({}, { throttle: { maxFailures: 3, windowMs: 60_000 } })
    try {
      for (let i = 0; i < 3; i++) expect((await postMetadata({ url: t.url, auth: basic('alice', `wrong-${i}`) })).status).toBe(401)
      const before = t.userChecks()
      const throttled = await postMetadata({ url: t.url, auth: ncAlice })
      expect(throttled.status).toBe(429)
      expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0)
      expect(t.userChecks()).toBe(before)
    } finally {
      await t.close()
    }
  })
})
