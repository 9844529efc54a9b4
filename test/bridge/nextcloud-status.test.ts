import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { XMLParser } from 'fast-xml-parser'
import { aliceAuth, basic, startBridge, startFakeGateway, type TestBridge } from './helpers.ts'

describe('Nextcloud client surface', () => {
  let gateway: Awaited<ReturnType<typeof startFakeGateway>>
  let t: TestBridge
  beforeAll(async () => {
    gateway = await startFakeGateway(() => {})
    t = await startBridge(gateway.url)
  })
  afterAll(async () => {
    await t.close()
    await gateway.close()
  })

  it('GET /status.php says installed and not in maintenance', async () => {
    const res = await fetch(`${t.url}/status.php`)
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body).toMatchObject({ installed: true, maintenance: false, needsDbUpgrade: false, productname: 'Nextcloud' })
    expect(body.version).toMatch(/^31\.\d+\.\d+\.\d+$/)
    expect(body.versionstring).toMatch(/^31\.\d+\.\d+$/)
  })

  it.each(['v1', 'v2'])('capabilities %s in JSON carry the WebDAV root and chunking', async (v) => {
    const res = await fetch(`${t.url}/ocs/${v}.php/cloud/capabilities?format=json`, {
      headers: { authorization: aliceAuth, 'ocs-apirequest': 'true' },
    })
    expect(res.status).toBe(200)
    const { ocs } = await res.json()
    expect(ocs.meta).toMatchObject({ status: 'ok', statuscode: v === 'v1' ? 100 : 200 })
    expect(ocs.data.version.major).toBe(31)
    expect(ocs.data.capabilities.core['webdav-root']).toBe('remote.php/webdav')
    expect(ocs.data.capabilities.dav.chunking).toBe('1.0')
    expect(ocs.data.capabilities.files).toBeDefined()
  })

  it('capabilities come as XML by default and as JSON for an Accept naming json', async () => {
    const xml = await fetch(`${t.url}/ocs/v1.php/cloud/capabilities`, { headers: { authorization: aliceAuth } })
    expect(xml.headers.get('content-type')).toMatch(/xml/)
    const parsed = new XMLParser().parse(await xml.text())
    expect(parsed.ocs.meta.statuscode).toBe(100)
    expect(parsed.ocs.data.capabilities.core['webdav-root']).toBe('remote.php/webdav')
    const json = await fetch(`${t.url}/ocs/v2.php/cloud/capabilities`, {
      headers: { authorization: aliceAuth, accept: 'application/json' },
    })
    expect((await json.json()).ocs.data.capabilities.dav.chunking).toBe('1.0')
  })

  it('capabilities are public as in Nextcloud, but wrong credentials are still a 401', async () => {
    const anonymous = await fetch(`${t.url}/ocs/v2.php/cloud/capabilities?format=json`)
    expect(anonymous.status).toBe(200)
    const wrong = await fetch(`${t.url}/ocs/v2.php/cloud/capabilities?format=json`, {
      headers: { authorization: basic('alice', 'nope-nope') },
    })
    expect(wrong.status).toBe(401)
    expect((await wrong.json()).ocs.meta.status).toBe('failure')
  })

  it.each(['v1', 'v2'])('cloud/user %s describes the authenticated user', async (v) => {
    const res = await fetch(`${t.url}/ocs/${v}.php/cloud/user?format=json`, {
      headers: { authorization: aliceAuth, 'ocs-apirequest': 'true' },
    })
    expect(res.status).toBe(200)
    const { ocs } = await res.json()
    expect(ocs.data).toMatchObject({ id: 'alice', 'display-name': 'Alice Liddell', email: null })
    expect(ocs.data.quota).toBeDefined()
  })

  it('cloud/user requires credentials', async () => {
    const res = await fetch(`${t.url}/ocs/v2.php/cloud/user?format=json`)
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toMatch(/^Basic/)
    const v1 = await fetch(`${t.url}/ocs/v1.php/cloud/user`)
    expect(v1.status).toBe(401)
    expect(new XMLParser().parse(await v1.text()).ocs.meta.statuscode).toBe(997)
  })
})
