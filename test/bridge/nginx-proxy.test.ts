import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NGINX, recipe, startNginx, type RunningNginx } from '../helpers/nginx.ts'
import { freePort } from '../../scripts/lib/ports.ts'
import { basic, postMetadata, RECORDED_FILE_INFO } from './helpers.ts'
import { NC_ALICE, ncAlice, startNextcloudSetup } from './nextcloud-helpers.ts'

/**
 * The reverse-proxy recipe (scripts/nginx/gateway.conf) run by a real nginx
 * on loopback, in front of the bridge (FILESYNC=nextcloud, TRUST_PROXY=loopback)
 * and the Nextcloud stand-in: every request goes through nginx.
 */
describe.skipIf(!NGINX)("nginx in front of Nextcloud and the bridge (skipped when Debian's nginx is not installed)", () => {
  let t: Awaited<ReturnType<typeof startNextcloudSetup>>
  let nginx: RunningNginx
  let base: string

  beforeAll(async () => {
    t = await startNextcloudSetup({ trustProxy: 'loopback' }, { throttle: { maxFailures: 3, windowMs: 60_000 }, nextcloudCacheMs: 0 })
    const port = await freePort()
    const servers = recipe('gateway.conf')
      .replace('server 127.0.0.1:8080;', `server 127.0.0.1:${t.server.port};`)
      .replace('server 127.0.0.1:8081;', `server 127.0.0.1:${t.nextcloud.port};`)
      .replace('listen 80;', `listen 127.0.0.1:${port};`)
    expect(servers).toContain(`127.0.0.1:${t.server.port}`)
    nginx = await startNginx(servers, port)
    base = `http://127.0.0.1:${port}`
  })
  afterAll(async () => {
    await nginx?.stop()
    await t?.close()
  })

  it('sends status.php, cloud/user and WebDAV to Nextcloud', async () => {
    const status = await fetch(`${base}/status.php`)
    expect(status.status).toBe(200)
    expect(await status.json()).toMatchObject({ installed: true, maintenance: false, productname: 'Nextcloud' })

    const user = await fetch(`${base}/ocs/v2.php/cloud/user?format=json`, { headers: { authorization: ncAlice, 'ocs-apirequest': 'true' } })
    expect(user.status).toBe(200)
    expect(((await user.json()) as any).ocs.data.id).toBe('alice')

    const propfind = await fetch(`${base}/remote.php/dav/files/alice/Filecoin/docs/report.pdf`, {
      method: 'PROPFIND',
      headers: { authorization: ncAlice, depth: '0' },
    })
    expect(propfind.status).toBe(207)
  })

  it("sends the app's OCS routes to the bridge, which checks the caller with Nextcloud", async () => {
    const res = await postMetadata({ url: base, auth: ncAlice, body: { filePath: '/Filecoin/docs/report.pdf' } })
    expect(res.status).toBe(200)
    expect(res.body.metadata.file).toMatchObject({ cid: RECORDED_FILE_INFO.result.file.cid, path: '/Filecoin/docs', file: 'report.pdf' })

    const s = t.nextcloud.login('alice')
    const viaSession = await postMetadata({
      url: base,
      auth: null,
      headers: { cookie: s.cookie, requesttoken: s.requestToken },
      body: { filePath: '/Team/plan.txt' },
    })
    expect(viaSession.status).toBe(200)
    const tab = await fetch(`${base}/ocs/v2.php/apps/gateway/config`, {
      headers: { cookie: s.cookie, requesttoken: s.requestToken, 'ocs-apirequest': 'true' },
    })
    expect(tab.status).toBe(200)
  })

  it("passes on Nextcloud's refusals: wrong password, expired session, missing requesttoken, maintenance", async () => {
    expect((await postMetadata({ url: base, auth: basic('alice', 'not-her-password') })).status).toBe(401)
    const expired = t.nextcloud.login('alice')
    t.nextcloud.sessions.get(expired.id)!.expired = true
    expect(
      (await postMetadata({ url: base, auth: null, headers: { cookie: expired.cookie, requesttoken: expired.requestToken } })).status,
    ).toBe(401)
    const s = t.nextcloud.login('alice')
    const noToken = await postMetadata({ url: base, auth: null, headers: { cookie: s.cookie } })
    expect(noToken.status).toBe(412)
    expect(noToken.body).toEqual({ message: 'CSRF check failed' })

    t.nextcloud.maintenance = true
    try {
      const res = await postMetadata({ url: base, auth: ncAlice, body: { filePath: '/Filecoin/docs/report.pdf' } })
      expect(res.status).toBe(503)
      expect(res.body).toMatchObject({ success: false })
      expect(await (await fetch(`${base}/status.php`)).json()).toMatchObject({ maintenance: true })
    } finally {
      t.nextcloud.maintenance = false
    }
  })

  it('drops headers that name another user before they reach the bridge', async () => {
    const res = await postMetadata({
      url: base,
      auth: ncAlice,
      headers: { 'x-forwarded-user': 'bob', 'oc-user': 'bob' },
      body: { filePath: '/Filecoin/bob-only.txt' },
    })
    // Still alice: her /Filecoin/bob-only.txt does not exist.
    expect(res.status).toBe(404)
    expect(JSON.stringify(res.body)).not.toContain('bafk')
    const own = await postMetadata({
      url: base,
      auth: ncAlice,
      headers: { 'x-remote-user': 'bob' },
      body: { filePath: '/Filecoin/docs/report.pdf' },
    })
    expect(own.status).toBe(200)
  })

  it('refuses oversized headers with a 4xx, never a 500', async () => {
    const res = await fetch(`${base}/ocs/v2.php/apps/gateway/get-file-metadata`, {
      method: 'POST',
      headers: { cookie: 'big=' + 'x'.repeat(20_000), 'ocs-apirequest': 'true', 'content-type': 'application/json' },
      body: '{}',
    })
    expect(res.status).toBeGreaterThanOrEqual(400)
    expect(res.status).toBeLessThan(500)
  })

  // Last: it leaves 127.0.0.1 throttled.
  it('throttles on the address nginx saw, whatever X-Forwarded-For the client sends', async () => {
    // Earlier tests already spent some of this address's 3 failures; each attempt claims another address.
    const statuses: number[] = []
    for (let i = 0; i < 4 && statuses.at(-1) !== 429; i++) {
      statuses.push(
        (await postMetadata({ url: base, auth: basic(`nobody${i}`, 'x'), headers: { 'x-forwarded-for': `10.0.0.${i}` } })).status,
      )
    }
    expect(statuses.at(-1)).toBe(429)
    expect(statuses.slice(0, -1).every((s) => s === 401)).toBe(true)
    const res = await postMetadata({ url: base, auth: basic(NC_ALICE.id, NC_ALICE.password), headers: { 'x-forwarded-for': '10.9.9.9' } })
    expect(res.status).toBe(429)
  })
})
