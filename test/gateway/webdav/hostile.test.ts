import { request } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { dav, errorCode, parseMultistatus } from './client.ts'
import { startDav, type DavHarness } from './harness.ts'

let h: DavHarness
beforeAll(async () => {
  h = await startDav()
  await dav(h.url, 'MKCOL', '/carol')
  await dav(h.url, 'PUT', '/carol/keep.txt', { body: 'keep me' })
})
afterAll(() => h.close())

/** fetch() would normalise `..` and friends away; this sends the path exactly as written. */
function raw(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(h.url, { method, path, headers }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => (text += c))
      res.on('end', () => resolve({ status: res.statusCode!, body: text }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

const codeOf = (body: string) => /<g:code>([^<]+)<\/g:code>/.exec(body)?.[1]

describe('hostile paths are a 400, never a 500', () => {
  const long = 'a'.repeat(256)
  const deep = Array.from({ length: 600 }, () => 'abcdefgh').join('/') // 5 399 bytes
  it.each([
    ['dot-dot', '/carol/../etc/passwd'],
    ['encoded dot-dot', '/carol/%2e%2e/%2E%2E/etc'],
    ['dot segment', '/carol/./keep.txt'],
    ['NUL', '/carol/a%00b'],
    ['backslash', '/carol/..%5c..%5cwin.ini'],
    ['encoded slash', '/carol/a%2fb'],
    ['control character', '/carol/a%0Ab'],
    ['bad percent-encoding', '/carol/%zz'],
    ['truncated percent-encoding', '/carol/abc%'],
    ['invalid UTF-8', '/carol/%C3%28'],
    ['fragment', '/carol/keep.txt#frag'],
    ['name over 255 bytes', `/carol/${long}`],
    ['path over 4096 bytes', `/carol/${deep}`],
  ])('%s', async (_what, path) => {
    for (const method of ['PUT', 'GET', 'PROPFIND', 'DELETE', 'MKCOL']) {
      const res = await raw(method, path, { Depth: '0' }, method === 'PUT' ? 'x' : undefined)
      expect(res.status, `${method} ${path}`).toBe(400)
      expect(codeOf(res.body)).toBe('INVALID_PATH')
    }
  })

  it('accepts a 255-byte name, including multi-byte characters', async () => {
    const name = 'é'.repeat(127) + 'a' // 255 bytes in UTF-8
    expect((await raw('PUT', `/carol/${encodeURIComponent(name)}`, {}, 'x')).status).toBe(201)
  })

  it('refuses hostile destinations of COPY and MOVE', async () => {
    expect((await raw('COPY', '/carol/keep.txt', { Destination: '/carol/../../x' })).status).toBe(400)
    expect((await raw('MOVE', '/carol/keep.txt', { Destination: `${h.url}/carol/%2e%2e/x` })).status).toBe(400)
    expect((await raw('COPY', '/carol/keep.txt', { Destination: 'http://elsewhere.example/carol/x' })).status).toBe(502)
    expect((await raw('COPY', '/carol/keep.txt', { Destination: '/carol/keep.txt' })).status).toBe(403)
    expect((await raw('COPY', '/carol/keep.txt', { Destination: '/carol/x', Overwrite: 'maybe' })).status).toBe(400)
    expect((await raw('COPY', '/carol/keep.txt')).status).toBe(400)
    expect((await raw('MOVE', '/carol', { Destination: '/carol/inside' })).status).toBe(403)
    expect(await (await dav(h.url, 'GET', '/carol/keep.txt')).text()).toBe('keep me')
  })
})

describe('hostile XML bodies', () => {
  const propfind = (body: string) => dav(h.url, 'PROPFIND', '/carol', { headers: { Depth: '0', 'Content-Type': 'application/xml' }, body })

  it('refuses entity expansion (billion laughs) without expanding anything', async () => {
    const lol = `<?xml version="1.0"?>
      <!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
      <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">]>
      <d:propfind xmlns:d="DAV:"><d:prop><d:displayname>&lol2;</d:displayname></d:prop></d:propfind>`
    const res = await propfind(lol)
    expect(res.status).toBe(400)
    expect(await errorCode(res)).toBe('INVALID_XML')
  })

  it('refuses an undefined entity, malformed XML and bad namespaces with 400', async () => {
    for (const body of [
      '<d:propfind xmlns:d="DAV:"><d:prop><d:x>&xxe;</d:x></d:prop></d:propfind>',
      '<foo>',
      '<d:propfind xmlns:d="DAV:"><d:prop></d:propfind>',
      '<D:propfind xmlns:D="DAV:"><D:prop><bar:foo xmlns:bar=""/></D:prop></D:propfind>',
      '<x:propfind><x:prop/></x:propfind>',
      '<d:propfind xmlns:d="DAV:"/><d:propfind xmlns:d="DAV:"/>',
      '<d:propfind xmlns:d="DAV:"><d:prop><d:x>&#0;</d:x></d:prop></d:propfind>',
      '<d:lockinfo xmlns:d="DAV:"/>',
    ]) {
      expect((await propfind(body)).status, body).toBe(400)
    }
  })

  it('refuses deep nesting with 400', async () => {
    const body = '<d:propfind xmlns:d="DAV:"><d:prop>' + '<a>'.repeat(10_000) + '</a>'.repeat(10_000) + '</d:prop></d:propfind>'
    expect((await propfind(body)).status).toBe(400)
  })

  it('refuses bodies over 1 MiB with 413, announced or chunked', async () => {
    const big = '<d:propfind xmlns:d="DAV:"><!--' + 'x'.repeat(1024 * 1024) + '--><d:allprop/></d:propfind>'
    expect((await propfind(big)).status).toBe(413)
    const chunked = await new Promise<number>((resolve, reject) => {
      const req = request(h.url + '/carol', { method: 'PROPPATCH', headers: { 'Transfer-Encoding': 'chunked' } }, (res) => {
        res.resume()
        resolve(res.statusCode!)
      })
      req.on('error', reject)
      req.end(big)
    })
    expect(chunked).toBe(413)
  })

  it('refuses PROPFIND with Depth infinity (403 propfind-finite-depth), also when Depth is missing', async () => {
    for (const headers of [{ Depth: 'infinity' }, {} as Record<string, string>]) {
      const res = await dav(h.url, 'PROPFIND', '/carol', { headers })
      expect(res.status).toBe(403)
      expect(await res.text()).toContain('<d:propfind-finite-depth/>')
    }
  })

  it('still answers a sound PROPFIND afterwards', async () => {
    const res = await propfind('<d:propfind xmlns:d="DAV:"><d:allprop/></d:propfind>')
    expect(res.status).toBe(207)
    expect(parseMultistatus(await res.text())).toHaveLength(1)
  })
})

describe('other bad requests', () => {
  it.each([
    ['a malformed If header', 'PUT', { If: '(<unterminated' }],
    ['an If header mixing tagged and untagged lists', 'PUT', { If: '(<urn:x>) </carol/keep.txt> (<urn:y>)' }],
    ['a Depth of 1 on DELETE of a folder', 'DELETE', { Depth: '1' }],
    ['LOCK with Depth 1', 'LOCK', { Depth: '1' }],
    ['UNLOCK without a token', 'UNLOCK', {}],
  ])('%s is a 400', async (_what, method, headers) => {
    const path = method === 'PUT' ? '/carol/keep.txt' : '/carol'
    const body =
      method === 'LOCK'
        ? '<d:lockinfo xmlns:d="DAV:"><d:lockscope><d:exclusive/></d:lockscope><d:locktype><d:write/></d:locktype></d:lockinfo>'
        : method === 'PUT'
          ? 'x'
          : undefined
    expect((await raw(method, path, headers as Record<string, string>, body)).status).toBe(400)
  })

  it('answers an unknown method with 405 and Allow', async () => {
    const res = await dav(h.url, 'PATCH', '/carol')
    expect(res.status).toBe(405)
    expect(res.headers.get('allow')).toContain('PROPFIND')
  })

  it('answers MKCOL with a body with 415 and on an existing path with 405', async () => {
    expect((await dav(h.url, 'MKCOL', '/carol/new', { body: 'stuff', headers: { 'Content-Type': 'text/plain' } })).status).toBe(415)
    expect((await dav(h.url, 'MKCOL', '/carol')).status).toBe(405)
    expect((await dav(h.url, 'MKCOL', '/carol/no/parent')).status).toBe(409)
  })

  it('refuses to delete the root', async () => {
    expect((await dav(h.url, 'DELETE', '/')).status).toBe(403)
  })
})
