import { describe, expect, it } from 'vitest'
import { createDavUrlMapper, parseClientDavPath, rewriteHrefs, rewriteIfHeader } from '../../server/bridge/dav-urls.ts'
import { BridgeError } from '../../server/bridge/errors.ts'
import { createPathMap } from '../../server/bridge/path-map.ts'

const status = (fn: () => unknown) => {
  try {
    fn()
  } catch (err) {
    return (err as BridgeError).status
  }
  return undefined
}

describe('parseClientDavPath', () => {
  it('reads both files areas', () => {
    expect(parseClientDavPath('/remote.php/dav/files/alice/a%20b/c.txt', 'alice')).toEqual({
      base: '/remote.php/dav/files/alice',
      userPath: '/a b/c.txt',
      trailingSlash: false,
    })
    expect(parseClientDavPath('/remote.php/dav/files/alice', 'alice')).toMatchObject({ userPath: '/', trailingSlash: false })
    expect(parseClientDavPath('/remote.php/dav/files/alice/dir/', 'alice')).toMatchObject({ userPath: '/dir', trailingSlash: true })
    expect(parseClientDavPath('/remote.php/webdav/x', 'alice')).toEqual({
      base: '/remote.php/webdav',
      userPath: '/x',
      trailingSlash: false,
    })
    expect(parseClientDavPath('/remote.php/dav/uploads/alice', 'alice')).toBeUndefined()
  })

  it('refuses another user (403) and hostile paths (400)', () => {
    expect(status(() => parseClientDavPath('/remote.php/dav/files/bob/x', 'alice'))).toBe(403)
    expect(status(() => parseClientDavPath('/remote.php/dav/files/alice/../bob/x', 'alice'))).toBe(400)
    expect(status(() => parseClientDavPath('/remote.php/dav/files/alice/%2e%2e/bob', 'alice'))).toBe(400)
    expect(status(() => parseClientDavPath('/remote.php/webdav/a%5cb', 'alice'))).toBe(400)
  })
})

describe('DAV URL mapper', () => {
  const mapper = createDavUrlMapper({
    pathMap: createPathMap('/{user}'),
    userId: 'alice',
    base: '/remote.php/dav/files/alice',
    gatewayUrl: new URL('http://127.0.0.1:9011'),
    clientHosts: ['cloud.example', 'h', undefined],
  })

  it("maps Destination URLs inside the user's area to the gateway", () => {
    expect(mapper.clientUrlToGateway('http://cloud.example/remote.php/dav/files/alice/new%20name.txt').url).toBe(
      'http://127.0.0.1:9011/alice/new%20name.txt',
    )
    expect(mapper.clientUrlToGateway('/remote.php/webdav/dir/').url).toBe('http://127.0.0.1:9011/alice/dir/')
  })

  it('answers 502 for a Destination on another server (RFC 4918 §9.8.4), whatever its path', () => {
    expect(status(() => mapper.clientUrlToGateway('http://evil.example/remote.php/dav/files/alice/x'))).toBe(502)
    expect(status(() => mapper.clientUrlToGateway('https://cloud.example:8443/remote.php/dav/files/alice/x'))).toBe(502)
    expect(status(() => mapper.clientUrlToGateway('http://user@evil.example/remote.php/dav/files/alice/x'))).toBe(502)
    expect(mapper.clientUrlToGateway('http://CLOUD.example/remote.php/dav/files/alice/x').url).toBe('http://127.0.0.1:9011/alice/x')
  })

  it('refuses Destination URLs elsewhere', () => {
    expect(status(() => mapper.clientUrlToGateway('http://cloud.example/remote.php/dav/files/bob/x'))).toBe(403)
    expect(status(() => mapper.clientUrlToGateway('http://cloud.example/alice/x'))).toBe(403)
    expect(status(() => mapper.clientUrlToGateway('http://cloud.example/remote.php/dav/files/alice/../bob/x'))).toBe(400)
  })

  it('maps gateway hrefs back, keeping collection slashes', () => {
    expect(mapper.gatewayToClient('/alice/')).toBe('/remote.php/dav/files/alice/')
    expect(mapper.gatewayToClient('/alice')).toBe('/remote.php/dav/files/alice/')
    expect(mapper.gatewayToClient('http://127.0.0.1:9011/alice/d%C3%A9j%C3%A0/')).toBe('/remote.php/dav/files/alice/d%C3%A9j%C3%A0/')
    expect(mapper.gatewayToClient('/bob/x')).toBeUndefined()
  })

  it('rewrites every href of a multistatus whatever its prefix', () => {
    const xml =
      '<?xml version="1.0"?><D:multistatus xmlns:D="DAV:"><D:response><D:href>/alice/a%20%26%20b.txt</D:href></D:response>' +
      '<d:response><d:href>http://127.0.0.1:9011/alice/dir/</d:href></d:response><response xmlns="DAV:"><href>/alice/x&amp;y</href></response></D:multistatus>'
    const out = rewriteHrefs(xml, mapper.gatewayToClient)
    expect(out).toContain('<D:href>/remote.php/dav/files/alice/a%20%26%20b.txt</D:href>')
    expect(out).toContain('<d:href>/remote.php/dav/files/alice/dir/</d:href>')
    expect(out).toContain('<href>/remote.php/dav/files/alice/x%26y</href>')
  })

  const toGateway = (u: string) => mapper.clientUrlToGateway(u).url
  it('rewrites the resource tags of an If header but not lock tokens', () => {
    const value =
      '<http://h/remote.php/dav/files/alice/a> (<opaquelocktoken:1234> ["etag"]) (Not <urn:uuid:5>) </remote.php/dav/files/alice/b> (<urn:uuid:6>)'
    expect(rewriteIfHeader(value, toGateway, 'h')).toBe(
      '<http://127.0.0.1:9011/alice/a> (<opaquelocktoken:1234> ["etag"]) (Not <urn:uuid:5>) <http://127.0.0.1:9011/alice/b> (<urn:uuid:6>)',
    )
  })

  it.each([
    ['another host', '<http://evil.example/remote.php/dav/files/alice/a> (<urn:uuid:1>)'],
    ['another scheme', '<file:///etc/passwd> (<urn:uuid:1>)'],
    ['a URN as a resource tag', '<urn:x> (<urn:uuid:1>)'],
    ["another user's area", '</remote.php/dav/files/bob/secret.txt> (<urn:uuid:1>)'],
    ['a network-path reference', '<//evil.example/remote.php/dav/files/alice/a> (<urn:uuid:1>)'],
    ['an unclosed tag', '<http://h/remote.php/dav/files/alice/a (<urn:uuid:1>)'],
  ])('refuses a resource tag naming %s with 412', (_why, value) => {
    let status: number | undefined
    try {
      rewriteIfHeader(value, toGateway, 'h')
    } catch (err) {
      status = (err as { status?: number }).status
    }
    expect(status).toBe(412)
  })
})
