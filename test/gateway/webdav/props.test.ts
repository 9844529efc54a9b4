import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { findChild, textOf } from '../../../server/gateway/webdav/xml.ts'
import { dav, DAV, GW, errorCode, parseMultistatus, propText } from './client.ts'
import { startDav, type DavHarness } from './harness.ts'

let h: DavHarness
beforeAll(async () => {
  h = await startDav()
  await dav(h.url, 'MKCOL', '/dora')
  await dav(h.url, 'MKCOL', '/dora/Ça va')
  await dav(h.url, 'PUT', '/dora/' + encodeURIComponent('a&b <c>.txt'), { body: 'twelve bytes' })
})
afterAll(() => h.close())

const propfind = async (path: string, depth: string, body?: string) => {
  const res = await dav(h.url, 'PROPFIND', path, { headers: { Depth: depth }, body })
  expect(res.status).toBe(207)
  expect(res.headers.get('content-type')).toContain('application/xml')
  return parseMultistatus(await res.text())
}

describe('PROPFIND', () => {
  it('lists a folder at Depth 1 with encoded hrefs, folders ending in a slash', async () => {
    const results = await propfind('/dora', '1')
    expect(results.map((r) => r.href).sort()).toEqual(['/dora/', '/dora/%C3%87a%20va/', '/dora/a%26b%20%3Cc%3E.txt'])
    const [folder, sub, file] = ['/dora/', '/dora/%C3%87a%20va/', '/dora/a%26b%20%3Cc%3E.txt'].map((href) =>
      results.find((r) => r.href === href)!,
    )
    expect(
      findChild(
        folder.byStatus.get(200)!.find((p) => p.local === 'resourcetype')!,
        DAV,
        'collection',
      ),
    ).toBeDefined()
    expect(propText(sub, DAV, 'displayname')).toBe('Ça va')
    expect(propText(file, DAV, 'displayname')).toBe('a&b <c>.txt')
    expect(propText(file, DAV, 'getcontentlength')).toBe('12')
    expect(propText(file, DAV, 'getcontenttype')).toContain('text/plain')
    expect(propText(file, DAV, 'getetag')).toMatch(/^".+"$/)
    expect(new Date(propText(file, DAV, 'getlastmodified')!).getTime()).not.toBeNaN()
    expect(new Date(propText(file, DAV, 'creationdate')!).getTime()).not.toBeNaN()
  })

  it('gives only the resource itself at Depth 0, with an empty body meaning allprop', async () => {
    const results = await propfind('/dora/', '0')
    expect(results).toHaveLength(1)
    expect(propText(results[0], DAV, 'supportedlock')).toBeDefined()
  })

  it('exposes the file CID in our namespace', async () => {
    const [file] = await propfind(
      '/dora/a%26b%20%3Cc%3E.txt',
      '0',
      `<?xml version="1.0"?>
      <d:propfind xmlns:d="DAV:" xmlns:g="${GW}"><d:prop><g:cid/><d:getetag/></d:prop></d:propfind>`,
    )
    expect(propText(file, GW, 'cid')).toBe((await h.namespace.get('/dora/a&b <c>.txt'))!.cid)
    expect(propText(file, GW, 'cid')).toMatch(/^baf/)
  })

  it('reports unknown properties as 404 and names everything with propname', async () => {
    const [r] = await propfind(
      '/dora',
      '0',
      `<d:propfind xmlns:d="DAV:"><d:prop><d:displayname/><x:nope xmlns:x="urn:x"/></d:prop></d:propfind>`,
    )
    expect(r.byStatus.get(404)!.map((p) => `${p.ns} ${p.local}`)).toEqual(['urn:x nope'])
    const [names] = await propfind('/dora/a%26b%20%3Cc%3E.txt', '0', '<d:propfind xmlns:d="DAV:"><d:propname/></d:propfind>')
    const listed = names.byStatus.get(200)!
    expect(listed.map((p) => p.local)).toEqual(expect.arrayContaining(['getcontentlength', 'getetag', 'lockdiscovery', 'cid']))
    expect(listed.every((p) => p.children.length === 0)).toBe(true)
  })

  it('answers 404 for a missing resource', async () => {
    const res = await dav(h.url, 'PROPFIND', '/dora/ghost', { headers: { Depth: '0' } })
    expect(res.status).toBe(404)
    expect(await errorCode(res)).toBe('NOT_FOUND')
  })
})

describe('PROPPATCH', () => {
  const path = '/dora/a%26b%20%3Cc%3E.txt'
  const patch = (body: string) => dav(h.url, 'PROPPATCH', path, { body })

  it('stores dead properties in any namespace, with XML values, and gives them back', async () => {
    const res = await patch(`<?xml version="1.0"?>
      <d:propertyupdate xmlns:d="DAV:" xmlns:z="urn:zoo"><d:set><d:prop>
        <z:color>blue &amp; green</z:color>
        <z:nested><inner xmlns="urn:other" a="1">text</inner><plain/></z:nested>
        <nons xmlns="">free</nons>
      </d:prop></d:set></d:propertyupdate>`)
    expect(res.status).toBe(207)
    const [r] = parseMultistatus(await res.text())
    expect([...r.byStatus.keys()]).toEqual([200])

    const [got] = await propfind(
      path,
      '0',
      `<d:propfind xmlns:d="DAV:"><d:prop>
      <z:color xmlns:z="urn:zoo"/><z:nested xmlns:z="urn:zoo"/><nons xmlns=""/></d:prop></d:propfind>`,
    )
    expect(propText(got, 'urn:zoo', 'color')).toBe('blue & green')
    expect(propText(got, '', 'nons')).toBe('free')
    const nested = got.byStatus.get(200)!.find((p) => p.local === 'nested')!
    const inner = findChild(nested, 'urn:other', 'inner')!
    expect(textOf(inner)).toBe('text')
    expect(inner.attrs).toEqual([{ ns: '', local: 'a', value: '1' }])
    // `plain` had no namespace in the request and must not pick one up on the way back.
    expect(findChild(nested, '', 'plain')).toBeDefined()
  })

  it('is all or nothing: a protected property fails with 403 and the rest with 424', async () => {
    const res = await patch(`<d:propertyupdate xmlns:d="DAV:" xmlns:z="urn:zoo"><d:set><d:prop>
      <z:color>red</z:color><d:getetag>"forged"</d:getetag><g:cid xmlns:g="${GW}">bafyfake</g:cid>
      </d:prop></d:set></d:propertyupdate>`)
    expect(res.status).toBe(207)
    const [r] = parseMultistatus(await res.text())
    expect(
      r.byStatus
        .get(403)!
        .map((p) => p.local)
        .sort(),
    ).toEqual(['cid', 'getetag'])
    expect(r.byStatus.get(424)!.map((p) => p.local)).toEqual(['color'])
    const [got] = await propfind(path, '0', '<d:propfind xmlns:d="DAV:"><d:prop><z:color xmlns:z="urn:zoo"/></d:prop></d:propfind>')
    expect(propText(got, 'urn:zoo', 'color')).toBe('blue & green')
  })

  it('removes properties, and dead properties follow COPY and MOVE and go with DELETE', async () => {
    await patch('<d:propertyupdate xmlns:d="DAV:"><d:remove><d:prop><nons xmlns=""/></d:prop></d:remove></d:propertyupdate>')
    expect((await dav(h.url, 'COPY', path, { headers: { Destination: '/dora/copy.txt' } })).status).toBe(201)
    expect((await dav(h.url, 'MOVE', '/dora/copy.txt', { headers: { Destination: '/dora/moved.txt' } })).status).toBe(201)
    const query = '<d:propfind xmlns:d="DAV:"><d:prop><z:color xmlns:z="urn:zoo"/><nons xmlns=""/></d:prop></d:propfind>'
    const [moved] = await propfind('/dora/moved.txt', '0', query)
    expect(propText(moved, 'urn:zoo', 'color')).toBe('blue & green')
    expect(moved.byStatus.get(404)!.map((p) => p.local)).toEqual(['nons'])

    await dav(h.url, 'DELETE', '/dora/moved.txt')
    await dav(h.url, 'PUT', '/dora/moved.txt', { body: 'new' })
    const [fresh] = await propfind('/dora/moved.txt', '0', query)
    expect(propText(fresh, 'urn:zoo', 'color')).toBeUndefined()
  })

  it('keeps xml:lang on a property', async () => {
    await patch(
      '<d:propertyupdate xmlns:d="DAV:"><d:set><d:prop><t:title xmlns:t="urn:t" xml:lang="fr">Bonjour</t:title></d:prop></d:set></d:propertyupdate>',
    )
    const res = await dav(h.url, 'PROPFIND', path, {
      headers: { Depth: '0' },
      body: '<d:propfind xmlns:d="DAV:"><d:prop><t:title xmlns:t="urn:t"/></d:prop></d:propfind>',
    })
    const text = await res.text()
    expect(text).toContain('xml:lang="fr"')
    const [r] = parseMultistatus(text)
    expect(propText(r, 'urn:t', 'title')).toBe('Bonjour')
  })

  it('needs an existing resource and a propertyupdate body', async () => {
    expect(
      (
        await dav(h.url, 'PROPPATCH', '/dora/ghost', {
          body: '<d:propertyupdate xmlns:d="DAV:"><d:set><d:prop><x/></d:prop></d:set></d:propertyupdate>',
        })
      ).status,
    ).toBe(404)
    expect((await patch('<d:propfind xmlns:d="DAV:"/>')).status).toBe(400)
    expect((await patch('')).status).toBe(400)
  })
})
