import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { findChild, parseXml, textOf } from '../../../server/gateway/webdav/xml.ts'
import { dav, DAV, errorCode, parseMultistatus } from './client.ts'
import { startDav, type DavHarness } from './harness.ts'

let h: DavHarness
beforeAll(async () => {
  h = await startDav()
  await dav(h.url, 'MKCOL', '/erin')
})
afterAll(() => h.close())

const lockBody = (scope: 'exclusive' | 'shared', owner = 'erin@example.com') =>
  `<?xml version="1.0"?><d:lockinfo xmlns:d="DAV:"><d:lockscope><d:${scope}/></d:lockscope>` +
  `<d:locktype><d:write/></d:locktype><d:owner><d:href>${owner}</d:href></d:owner></d:lockinfo>`

async function lock(path: string, scope: 'exclusive' | 'shared', headers: Record<string, string> = {}) {
  const res = await dav(h.url, 'LOCK', path, { headers: { Timeout: 'Second-600', ...headers }, body: lockBody(scope) })
  return { res, token: /^<(.+)>$/.exec(res.headers.get('lock-token') ?? '')?.[1], text: await res.text() }
}

describe('locks', () => {
  it('an exclusive lock keeps others out (423) and lets the holder write', async () => {
    await dav(h.url, 'PUT', '/erin/doc.txt', { body: 'v1' })
    const { res, token, text } = await lock('/erin/doc.txt', 'exclusive', { Depth: '0' })
    expect(res.status).toBe(200)
    expect(token).toMatch(/^opaquelocktoken:/)
    const active = findChild(findChild(parseXml(text), DAV, 'lockdiscovery')!, DAV, 'activelock')!
    expect(textOf(findChild(active, DAV, 'owner')!)).toBe('erin@example.com')
    expect(textOf(findChild(active, DAV, 'timeout')!)).toMatch(/^Second-(600|599)$/)

    const blocked = await dav(h.url, 'PUT', '/erin/doc.txt', { body: 'intruder' })
    expect(blocked.status).toBe(423)
    expect(await errorCode(blocked)).toBe('LOCKED')
    expect((await dav(h.url, 'DELETE', '/erin/doc.txt')).status).toBe(423)
    expect((await dav(h.url, 'MOVE', '/erin/doc.txt', { headers: { Destination: '/erin/x' } })).status).toBe(423)
    expect((await lock('/erin/doc.txt', 'shared')).res.status).toBe(423)

    expect((await dav(h.url, 'PUT', '/erin/doc.txt', { body: 'v2', headers: { If: `(<${token}>)` } })).status).toBe(204)
    expect(await (await dav(h.url, 'GET', '/erin/doc.txt')).text()).toBe('v2')

    // Wrong token: the If header holds (Not no-lock) but the lock is not ours.
    expect((await dav(h.url, 'PUT', '/erin/doc.txt', { body: 'v3', headers: { If: `(<${token}x>) (Not <DAV:no-lock>)` } })).status).toBe(
      423,
    )
    // A false If header is a 412.
    expect((await dav(h.url, 'PUT', '/erin/doc.txt', { body: 'v3', headers: { If: '(<DAV:no-lock>)' } })).status).toBe(412)

    expect((await dav(h.url, 'UNLOCK', '/erin/doc.txt', { headers: { 'Lock-Token': '<opaquelocktoken:bogus>' } })).status).toBe(409)
    expect((await dav(h.url, 'UNLOCK', '/erin/doc.txt', { headers: { 'Lock-Token': `<${token}>` } })).status).toBe(204)
    expect((await dav(h.url, 'PUT', '/erin/doc.txt', { body: 'free' })).status).toBe(204)
  })

  it('shows locks in lockdiscovery and refreshes them with an If header', async () => {
    await dav(h.url, 'PUT', '/erin/seen.txt', { body: 'x' })
    const { token } = await lock('/erin/seen.txt', 'exclusive')
    const pf = await dav(h.url, 'PROPFIND', '/erin/seen.txt', {
      headers: { Depth: '0' },
      body: '<d:propfind xmlns:d="DAV:"><d:prop><d:lockdiscovery/></d:prop></d:propfind>',
    })
    const [r] = parseMultistatus(await pf.text())
    const discovery = r.byStatus.get(200)![0]
    expect(textOf(findChild(findChild(findChild(discovery, DAV, 'activelock')!, DAV, 'locktoken')!, DAV, 'href')!)).toBe(token)

    const refreshed = await dav(h.url, 'LOCK', '/erin/seen.txt', { headers: { If: `(<${token}>)`, Timeout: 'Second-3000' } })
    expect(refreshed.status).toBe(200)
    expect(await refreshed.text()).toContain('Second-3000')
    expect((await dav(h.url, 'LOCK', '/erin/seen.txt', { headers: { If: '(<opaquelocktoken:nope>)' } })).status).toBe(412)
    expect((await dav(h.url, 'LOCK', '/erin/seen.txt')).status).toBe(400)
  })

  it('shared locks coexist; an exclusive one then conflicts', async () => {
    await dav(h.url, 'PUT', '/erin/shared.txt', { body: 'x' })
    const a = await lock('/erin/shared.txt', 'shared')
    const b = await lock('/erin/shared.txt', 'shared')
    expect([a.res.status, b.res.status]).toEqual([200, 200])
    expect(a.token).not.toBe(b.token)
    expect((await lock('/erin/shared.txt', 'exclusive')).res.status).toBe(423)
    expect((await dav(h.url, 'PUT', '/erin/shared.txt', { body: 'y', headers: { If: `(<${b.token}>)` } })).status).toBe(204)
  })

  it('a depth-infinity folder lock guards new members, and a locked member blocks deleting the folder', async () => {
    await dav(h.url, 'MKCOL', '/erin/team')
    const { token } = await lock('/erin/team', 'exclusive')
    expect((await dav(h.url, 'PUT', '/erin/team/new.txt', { body: 'x' })).status).toBe(423)
    expect((await dav(h.url, 'MKCOL', '/erin/team/sub')).status).toBe(423)
    const tagged = `<${h.url}/erin/team/> (<${token}>)`
    expect((await dav(h.url, 'PUT', '/erin/team/new.txt', { body: 'x', headers: { If: tagged } })).status).toBe(201)
    await dav(h.url, 'UNLOCK', '/erin/team', { headers: { 'Lock-Token': `<${token}>` } })

    await lock('/erin/team/new.txt', 'exclusive')
    expect((await dav(h.url, 'DELETE', '/erin/team')).status).toBe(423)
    expect(await h.namespace.get('/erin/team/new.txt')).toBeDefined()
  })

  it('locking an unmapped URL creates an empty file (201); the lock does not follow a COPY', async () => {
    const { res, token } = await lock('/erin/reserved.odt', 'exclusive')
    expect(res.status).toBe(201)
    expect((await h.namespace.get('/erin/reserved.odt'))?.size).toBe(0)
    expect((await dav(h.url, 'COPY', '/erin/reserved.odt', { headers: { Destination: '/erin/copy.odt' } })).status).toBe(201)
    expect((await dav(h.url, 'PUT', '/erin/copy.odt', { body: 'free' })).status).toBe(204)
    expect((await lock('/erin/nowhere/x', 'exclusive')).res.status).toBe(409)
    expect((await dav(h.url, 'UNLOCK', '/erin/reserved.odt', { headers: { 'Lock-Token': `<${token}>` } })).status).toBe(204)
  })

  it('a deleted resource takes its locks with it', async () => {
    await dav(h.url, 'PUT', '/erin/gone.txt', { body: 'x' })
    const { token } = await lock('/erin/gone.txt', 'exclusive')
    expect((await dav(h.url, 'DELETE', '/erin/gone.txt', { headers: { If: `(<${token}>)` } })).status).toBe(204)
    expect((await dav(h.url, 'PUT', '/erin/gone.txt', { body: 'again' })).status).toBe(201)
  })
})
