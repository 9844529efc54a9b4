import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openSql, type Sql } from '../../server/shared/sql/index.ts'
import { ALICE, BOB, aliceAuth, rawRequest, startBridge, startRealGateway, type TestBridge } from './helpers.ts'

const METADATA = '/ocs/v2.php/apps/gateway/get-file-metadata'

interface Login {
  cookie: string
  sessionId: string
  token: string
  setCookie: string
}

async function login(base: string, user: string, password: string): Promise<Login> {
  const res = await fetch(`${base}/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ user, password }),
    redirect: 'manual',
  })
  expect(res.status).toBe(303)
  const setCookie = res.headers.get('set-cookie') ?? ''
  const sessionId = /gateway_session=([^;]+)/.exec(setCookie)?.[1] ?? ''
  const cookie = `gateway_session=${sessionId}`
  const page = await (await fetch(`${base}/`, { headers: { cookie } })).text()
  const token = /data-requesttoken="([^"]+)"/.exec(page)?.[1] ?? ''
  return { cookie, sessionId, token, setCookie }
}

function metadata(base: string, headers: Record<string, string>, filePath = '/notes.txt') {
  return fetch(base + METADATA, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'ocs-apirequest': 'true', ...headers },
    body: JSON.stringify({ filePath }),
  })
}

describe('preview page: login, session cookie and request token', () => {
  let gateway: Awaited<ReturnType<typeof startRealGateway>>
  let t: TestBridge
  let sql: Sql
  let bundleDir: string

  beforeAll(async () => {
    gateway = await startRealGateway()
    sql = await openSql({ file: ':memory:', schema: 'bridge' })
    bundleDir = mkdtempSync(join(tmpdir(), 'bundle-'))
    t = await startBridge(
      gateway.url,
      { gatewayUser: gateway.user, gatewayPassword: gateway.password },
      { sql, bundleDir, throttle: { maxFailures: 3, windowMs: 60_000 } },
    )
    const put = await fetch(`${t.url}/remote.php/dav/files/alice/notes.txt`, {
      method: 'PUT',
      headers: { authorization: aliceAuth },
      body: 'some notes',
    })
    expect(put.status).toBe(201)
  })
  afterAll(async () => {
    await t.close()
    await sql.close()
    await gateway.close()
    rmSync(bundleDir, { recursive: true, force: true })
  })

  it('shows a login form to a visitor without a session', async () => {
    const res = await fetch(`${t.url}/`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/html')
    const html = await res.text()
    expect(html).toContain('action="/login"')
    expect(html).not.toContain('data-requesttoken')
    // Whoever ran `npm start` learns here whom to log in as and where the password is, never the password itself.
    expect(html).toContain('The first user is <strong>admin</strong>')
    expect(html).toMatch(
      /ADMIN_PASSWORD at the first start, or else in the file app\/admin-password of DATA_DIR .*\.\/data\/app\/admin-password/,
    )
  })

  it('sets an HttpOnly, SameSite=Lax session cookie whose id is stored only hashed', async () => {
    const s = await login(t.url, ALICE.user, ALICE.password)
    expect(s.setCookie).toMatch(/HttpOnly/i)
    expect(s.setCookie).toMatch(/SameSite=Lax/i)
    expect(s.sessionId.length).toBeGreaterThanOrEqual(40)
    const rows = await sql.all('SELECT * FROM sessions')
    expect(rows.length).toBeGreaterThan(0)
    expect(JSON.stringify(rows)).not.toContain(s.sessionId)
    expect(s.token).not.toBe('')
  })

  // `garbage` and a cut IPv6 literal are not URLs: refused as foreign, never a 500.
  // `null` (a sandboxed frame, a data: URL) and an empty Origin name no site of ours either.
  it.each(['https://evil.example', 'garbage', 'http://[::1', 'null', ''])(
    'refuses a login form posted from another site (Origin: %s)',
    async (origin) => {
      const res = await fetch(`${t.url}/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
        body: new URLSearchParams({ user: ALICE.user, password: ALICE.password }),
        redirect: 'manual',
      })
      expect(res.status).toBe(403)
      expect(res.headers.get('set-cookie')).toBeNull()
    },
  )

  it("refuses a login form with no Origin but another site's Referer, and takes one with its own", async () => {
    const post = (referer: string) =>
      fetch(`${t.url}/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', referer },
        body: new URLSearchParams({ user: ALICE.user, password: ALICE.password }),
        redirect: 'manual',
      })
    const foreign = await post('https://evil.example/login')
    expect(foreign.status).toBe(403)
    expect(foreign.headers.get('set-cookie')).toBeNull()
    const own = await post(`${t.url}/login?redirect_url=/apps/files`)
    expect(own.status).toBe(303)
    expect(own.headers.get('set-cookie')).toMatch(/./)
  })

  it('lets the session call the OCS route with its requesttoken, and answers 412 without it', async () => {
    const s = await login(t.url, ALICE.user, ALICE.password)
    const ok = await metadata(t.url, { cookie: s.cookie, requesttoken: s.token })
    expect(ok.status).toBe(200)
    expect((await ok.json()).metadata.file).toMatchObject({ path: '/', file: 'notes.txt' })

    const missing = await metadata(t.url, { cookie: s.cookie })
    expect(missing.status).toBe(412)
    expect(await missing.json()).toEqual({ message: 'CSRF check failed' })
    expect((await metadata(t.url, { cookie: s.cookie, requesttoken: s.token.slice(1) + 'x' })).status).toBe(412)
    // The config route too.
    const config = await fetch(`${t.url}/ocs/v2.php/apps/gateway/config`, { headers: { cookie: s.cookie, 'ocs-apirequest': 'true' } })
    expect(config.status).toBe(412)
  })

  it('hands the request token to @nextcloud/axios at /index.php/csrftoken', async () => {
    const s = await login(t.url, ALICE.user, ALICE.password)
    const res = await fetch(`${t.url}/index.php/csrftoken`, { headers: { cookie: s.cookie } })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ token: s.token })
    expect((await fetch(`${t.url}/index.php/csrftoken`)).status).toBe(401)
  })

  it("lists the user's files with PROPFIND through the session, and only theirs", async () => {
    const s = await login(t.url, ALICE.user, ALICE.password)
    const list = await fetch(`${t.url}/remote.php/dav/files/alice/`, {
      method: 'PROPFIND',
      headers: { cookie: s.cookie, requesttoken: s.token, depth: '1' },
    })
    expect(list.status).toBe(207)
    expect(await list.text()).toContain('/remote.php/dav/files/alice/notes.txt')
    expect(
      (await fetch(`${t.url}/remote.php/dav/files/alice/`, { method: 'PROPFIND', headers: { cookie: s.cookie, depth: '1' } })).status,
    ).toBe(412)
    // A plain download link works with the cookie alone, as in Nextcloud.
    const get = await fetch(`${t.url}/remote.php/dav/files/alice/notes.txt`, { headers: { cookie: s.cookie } })
    expect(get.status).toBe(200)
    expect(await get.text()).toBe('some notes')
    expect(
      (
        await fetch(`${t.url}/remote.php/dav/files/bob/`, {
          method: 'PROPFIND',
          headers: { cookie: s.cookie, requesttoken: s.token, depth: '1' },
        })
      ).status,
    ).toBeGreaterThanOrEqual(400)
  })

  it('forgets the session on logout', async () => {
    const s = await login(t.url, BOB.user, BOB.password)
    const out = await fetch(`${t.url}/logout`, {
      method: 'POST',
      headers: { cookie: s.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ requesttoken: s.token }),
      redirect: 'manual',
    })
    expect(out.status).toBe(303)
    expect((await metadata(t.url, { cookie: s.cookie, requesttoken: s.token })).status).toBe(401)
  })

  it('says to run npm run build while the bundle is missing, and loads it once built', async () => {
    const s = await login(t.url, ALICE.user, ALICE.password)
    const before = await (await fetch(`${t.url}/`, { headers: { cookie: s.cookie } })).text()
    expect(before).toContain('data-test="bundle-missing"')
    expect(before).toContain('npm run build')

    writeFileSync(join(bundleDir, 'gateway-init.mjs'), 'export {}\n')
    const res = await fetch(`${t.url}/`, { headers: { cookie: s.cookie } })
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'")
    const after = await res.text()
    expect(after).not.toContain('data-test="bundle-missing"')
    expect(after).toContain('src="/apps/gateway/js/gateway-init.mjs"')
    expect(after.indexOf('/preview-assets/host.js')).toBeLessThan(after.indexOf('/apps/gateway/js/gateway-init.mjs'))
    const script = await fetch(`${t.url}/apps/gateway/js/gateway-init.mjs`)
    expect(script.status).toBe(200)
    expect(script.headers.get('content-type')).toMatch(/javascript/)
  })

  it('serves its own assets but nothing outside them', async () => {
    expect((await fetch(`${t.url}/preview-assets/host.js`)).status).toBe(200)
    expect((await rawRequest(t.url, 'GET', '/apps/gateway/js/../../../package.json')).status).toBe(404)
    expect((await rawRequest(t.url, 'GET', '/preview-assets/%2e%2e/page.ts')).status).toBe(404)
    expect((await fetch(`${t.url}/apps/gateway/js/nope.mjs`)).status).toBe(404)
  })

  it('shows the admin page to admins only', async () => {
    const alice = await login(t.url, ALICE.user, ALICE.password)
    expect((await fetch(`${t.url}/settings/admin/gateway`, { headers: { cookie: alice.cookie } })).status).toBe(403)
    const admin = await login(t.url, 'admin', 'admin-password-1')
    const page = await fetch(`${t.url}/settings/admin/gateway`, { headers: { cookie: admin.cookie } })
    expect(page.status).toBe(200)
    expect(await page.text()).toContain('id="gateway-admin-settings"')
  })

  // Last: the throttle counts per address too, so later logins from here would wait.
  it('answers a wrong password with the form again and 401, and throttles with 429', async () => {
    const wrong = () =>
      fetch(`${t.url}/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'user=bob&password=nope-nope',
        redirect: 'manual',
      })
    const first = await wrong()
    expect(first.status).toBe(401)
    expect(first.headers.get('set-cookie')).toBeNull()
    expect(await first.text()).toContain('data-test="login-error"')
    await wrong()
    await wrong()
    expect((await wrong()).status).toBe(429)
  })
})
