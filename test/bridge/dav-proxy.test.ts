import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { randomBytes, createHash } from 'node:crypto'
import { aliceAuth, basic, BOB, postMetadata, rawRequest, startBridge, startBridgeOnRealGateway, startFakeGateway } from './helpers.ts'

const FILES = '/remote.php/dav/files/alice'

describe('WebDAV files area over the real gateway', () => {
  let t: Awaited<ReturnType<typeof startBridgeOnRealGateway>>
  const dav = (path: string, init: RequestInit & { headers?: Record<string, string> } = {}) =>
    fetch(`${t.url}${path}`, { ...init, headers: { authorization: aliceAuth, ...init.headers } })

  beforeAll(async () => {
    t = await startBridgeOnRealGateway()
  })
  afterAll(async () => {
    await t.close()
  })

  it('uploads with PUT and reads the record back through the OCS route', async () => {
    const put = await dav(`${FILES}/Reports/q1.txt`, { method: 'PUT', body: 'first quarter' })
    // The parent folder does not exist yet: WebDAV says 409.
    expect(put.status).toBe(409)
    expect((await dav(`${FILES}/Reports`, { method: 'MKCOL' })).status).toBe(201)
    expect((await dav(`${FILES}/Reports/q1.txt`, { method: 'PUT', body: 'first quarter' })).status).toBe(201)

    const res = await postMetadata({ url: t.url, body: { filePath: '/Reports/q1.txt' } })
    expect(res.status).toBe(200)
    expect(res.body.success).toBe(true)
    const file = res.body.metadata.file
    expect(file).toMatchObject({ path: '/Reports', file: 'q1.txt' })
    // 'first quarter' as a raw-leaves CIDv1 starts with bafkrei.
    expect(file.cid).toMatch(/^baf/)
    expect(file.details.state).toBe('Staging')
    expect(Array.isArray(file.details.groups)).toBe(true)
    // The gateway's plain-words progress passes through to the tab. The group holds the file's 13 bytes, and
    // perhaps already a folder's directory nodes, which the gateway stores in the background after a change.
    const [, held] = /^waiting for more data: (\d+) bytes of /.exec(file.details.groups[0].reason) ?? []
    expect(Number(held)).toBeGreaterThanOrEqual(13)
    expect(file.details.groups[0].reasonCode).toBe('WAITING_FOR_DATA')

    const folder = await postMetadata({ url: t.url, body: { filePath: '/Reports' } })
    expect(folder.status).toBe(200)
    expect(folder.body.metadata.file).toMatchObject({ path: '/', file: 'Reports' })
    expect((await postMetadata({ url: t.url, body: { filePath: '/Reports/none.txt' } })).status).toBe(404)
  })

  it('keeps unicode names intact both ways', async () => {
    const name = 'Фото €/naïve 日本.txt'
    const url = `${FILES}/${name.split('/').map(encodeURIComponent).join('/')}`
    expect((await dav(`${FILES}/${encodeURIComponent('Фото €')}`, { method: 'MKCOL' })).status).toBe(201)
    expect((await dav(url, { method: 'PUT', body: 'unicode' })).status).toBe(201)
    expect(await (await dav(url)).text()).toBe('unicode')
    const list = await (await dav(`${FILES}/${encodeURIComponent('Фото €')}/`, { method: 'PROPFIND', headers: { depth: '1' } })).text()
    expect(list).toContain(`<d:href>${url}</d:href>`)
    const meta = await postMetadata({ url: t.url, body: { filePath: `/${name}` } })
    expect(meta.status).toBe(200)
    expect(meta.body.metadata.file).toMatchObject({ path: '/Фото €', file: 'naïve 日本.txt' })
  })

  it('streams a large upload and serves ranges', async () => {
    const data = randomBytes(8 * 1024 * 1024 + 123)
    expect((await dav(`${FILES}/big.bin`, { method: 'PUT', body: data, headers: { 'x-oc-mtime': '1700000000' } })).status).toBe(201)
    const back = Buffer.from(await (await dav(`${FILES}/big.bin`)).arrayBuffer())
    expect(createHash('sha256').update(back).digest('hex')).toBe(createHash('sha256').update(data).digest('hex'))
    const part = await dav(`${FILES}/big.bin`, { headers: { range: 'bytes=100-199' } })
    expect(part.status).toBe(206)
    expect(part.headers.get('content-range')).toBe(`bytes 100-199/${data.length}`)
    expect(Buffer.from(await part.arrayBuffer())).toEqual(data.subarray(100, 200))
    const props = await (await dav(`${FILES}/big.bin`, { method: 'PROPFIND', headers: { depth: '0' } })).text()
    // X-OC-Mtime reached the gateway.
    expect(props).toContain('Tue, 14 Nov 2023 22:13:20 GMT')
  })

  it("rewrites hrefs of multistatus answers to the client's own URLs", async () => {
    const body = await (await dav(`${FILES}/`, { method: 'PROPFIND', headers: { depth: '1' } })).text()
    const hrefs = [...body.matchAll(/<d:href>([^<]*)<\/d:href>/g)].map((m) => m[1])
    expect(hrefs.length).toBeGreaterThan(1)
    for (const href of hrefs) expect(href.startsWith(`${FILES}/`)).toBe(true)
    expect(body).not.toContain('>/alice/')

    const legacy = await (await dav('/remote.php/webdav/', { method: 'PROPFIND', headers: { depth: '1' } })).text()
    for (const m of legacy.matchAll(/<d:href>([^<]*)<\/d:href>/g)) expect(m[1].startsWith('/remote.php/webdav/')).toBe(true)
  })

  it('rewrites every href of a listing too large for one chunk, as it streams', async () => {
    expect((await dav(`${FILES}/many`, { method: 'MKCOL' })).status).toBe(201)
    for (let i = 0; i < 400; i += 20) {
      await Promise.all(Array.from({ length: 20 }, (_, k) => dav(`${FILES}/many/file-${i + k}-é.txt`, { method: 'PUT', body: 'x' })))
    }
    const res = await dav(`${FILES}/many/`, { method: 'PROPFIND', headers: { depth: '1' } })
    expect(res.status).toBe(207)
    const xml = await res.text()
    const hrefs = [...xml.matchAll(/<d:href>([^<]*)<\/d:href>/g)].map((m) => m[1])
    expect(hrefs).toHaveLength(401)
    expect(hrefs.every((h) => h.startsWith(`${FILES}/many/`))).toBe(true)
    expect(new Set(hrefs).size).toBe(401)
    expect(xml.trimEnd().endsWith('</d:multistatus>')).toBe(true)
  })

  it("maps Destination for MOVE and COPY inside the user's area", async () => {
    await dav(`${FILES}/a.txt`, { method: 'PUT', body: 'a' })
    const copy = await dav(`${FILES}/a.txt`, { method: 'COPY', headers: { destination: `${t.url}${FILES}/b.txt` } })
    expect(copy.status).toBe(201)
    // RFC 4918 §9.8.4: another server's URL is a 502, and nothing moves.
    const elsewhere = await dav(`${FILES}/b.txt`, {
      method: 'MOVE',
      headers: { destination: `http://elsewhere.example/remote.php/webdav/c.txt` },
    })
    expect(elsewhere.status).toBe(502)
    expect(await elsewhere.text()).toContain('The destination is on another server')
    expect((await dav(`${FILES}/b.txt`)).status).toBe(200)
    const move = await dav(`${FILES}/b.txt`, { method: 'MOVE', headers: { destination: `${t.url}/remote.php/webdav/c.txt` } })
    expect(move.status).toBe(201)
    expect(await (await dav(`${FILES}/c.txt`)).text()).toBe('a')
    expect((await dav(`${FILES}/b.txt`)).status).toBe(404)
  })

  it('keeps lock tokens and If headers working through the proxy', async () => {
    await dav(`${FILES}/locked.txt`, { method: 'PUT', body: 'v1' })
    const lock = await dav(`${FILES}/locked.txt`, {
      method: 'LOCK',
      headers: { 'content-type': 'application/xml', timeout: 'Second-60' },
      body: '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>alice</D:owner></D:lockinfo>',
    })
    expect(lock.status).toBe(200)
    const token = lock.headers.get('lock-token')
    expect(token).toMatch(/^<.+>$/)
    const lockBody = await lock.text()
    expect(lockBody).toContain(`${FILES}/locked.txt`)
    expect((await dav(`${FILES}/locked.txt`, { method: 'PUT', body: 'v2' })).status).toBe(423)
    const tagged = await dav(`${FILES}/locked.txt`, {
      method: 'PUT',
      body: 'v2',
      headers: { if: `<${t.url}${FILES}/locked.txt> (${token})` },
    })
    expect([200, 201, 204]).toContain(tagged.status)
    // Tags the bridge cannot map into alice's own area are refused, never handed to the gateway.
    for (const tag of [`http://evil.example${FILES}/locked.txt`, 'file:///etc/passwd', '/remote.php/dav/files/bob/locked.txt']) {
      const foreign = await dav(`${FILES}/locked.txt`, { method: 'PUT', body: 'v3', headers: { if: `<${tag}> (${token})` } })
      expect(foreign.status, tag).toBe(412)
    }
    expect(await (await dav(`${FILES}/locked.txt`)).text()).toBe('v2')
    expect((await dav(`${FILES}/locked.txt`, { method: 'UNLOCK', headers: { 'lock-token': token! } })).status).toBe(204)
  })

  it("never lets a user reach another user's files", async () => {
    await dav(`${FILES}/mine.txt`, { method: 'PUT', body: 'mine' })
    const other = await fetch(`${t.url}/remote.php/dav/files/bob/`, {
      method: 'PROPFIND',
      headers: { authorization: aliceAuth, depth: '1' },
    })
    expect(other.status).toBe(403)
    const moveOut = await dav(`${FILES}/mine.txt`, {
      method: 'MOVE',
      headers: { destination: `${t.url}/remote.php/dav/files/bob/stolen.txt` },
    })
    expect(moveOut.status).toBe(403)
    const copyOut = await dav(`${FILES}/mine.txt`, { method: 'COPY', headers: { destination: `${t.url}/alice/x.txt` } })
    expect(copyOut.status).toBe(403)
    // Bob sees an empty area of his own, not alice's files.
    const bobList = await (
      await fetch(`${t.url}/remote.php/dav/files/bob/`, {
        method: 'PROPFIND',
        headers: { authorization: basic(BOB.user, BOB.password), depth: '1' },
      })
    ).text()
    expect(bobList).not.toContain('mine.txt')
    expect((await postMetadata({ url: t.url, auth: basic(BOB.user, BOB.password), body: { filePath: '/mine.txt' } })).status).toBe(404)
  })

  it.each([`${FILES}/../bob/x`, `${FILES}/%2e%2e/bob/x`, `${FILES}/a%5c..%5cbob`, `${FILES}/a%00b`, `${FILES}/bad%zzescape`])(
    'answers 400 for the hostile path %s',
    async (path) => {
      const res = await rawRequest(t.url, 'PROPFIND', path, { authorization: aliceAuth, depth: '0' })
      expect(res.status).toBe(400)
      // The envelope WebDAV clients understand, without a stack trace.
      expect(res.body).toContain('<s:exception>')
      expect(res.body).not.toMatch(/\bat .+\.ts:\d+/)
    },
  )

  it("refuses to delete or replace the root of a user's files", async () => {
    expect((await dav(`${FILES}/`, { method: 'DELETE' })).status).toBe(403)
    expect((await dav(`${FILES}/c.txt`, { method: 'MOVE', headers: { destination: `${t.url}${FILES}/` } })).status).toBe(403)
  })

  it('requires credentials', async () => {
    const res = await fetch(`${t.url}${FILES}/`, { method: 'PROPFIND' })
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toMatch(/^Basic realm="Nextcloud"/)
    const wrong = await fetch(`${t.url}${FILES}/`, { method: 'PROPFIND', headers: { authorization: basic('alice', 'wrong-password') } })
    expect(wrong.status).toBe(401)
  })

  it('answers 404 outside the files areas', async () => {
    expect((await dav('/remote.php/dav/calendars/alice/', { method: 'PROPFIND' })).status).toBe(404)
  })
})

describe('WebDAV files area when the gateway fails', () => {
  it('answers 502 when the gateway is down', async () => {
    const gone = await startFakeGateway(() => {})
    await gone.close()
    const t = await startBridge(gone.url)
    try {
      const res = await fetch(`${t.url}${FILES}/x.txt`, { method: 'PUT', body: 'x', headers: { authorization: aliceAuth } })
      expect(res.status).toBe(502)
    } finally {
      await t.close()
    }
  })

  it('answers 504 when the gateway does not answer in time', async () => {
    const slow = await startFakeGateway((app) =>
      app.use((req, res) => {
        if (req.method === 'MKCOL') return void res.status(201).end()
        setTimeout(() => res.status(207).end(), 3_000).unref()
      }),
    )
    const t = await startBridge(slow.url, { gatewayTimeoutMs: 200 })
    try {
      const res = await fetch(`${t.url}${FILES}/`, { method: 'PROPFIND', headers: { authorization: aliceAuth, depth: '1' } })
      expect(res.status).toBe(504)
    } finally {
      await t.close()
      await slow.close()
    }
  })

  it('answers 502, not a login prompt, when the gateway refuses the bridge', async () => {
    const refusing = await startFakeGateway((app) =>
      app.use((_req, res) => {
        res.status(401).set('www-authenticate', 'Basic realm="gateway"').end()
      }),
    )
    const t = await startBridge(refusing.url)
    try {
      const res = await fetch(`${t.url}${FILES}/`, { method: 'PROPFIND', headers: { authorization: aliceAuth } })
      expect(res.status).toBe(502)
      expect(res.headers.get('www-authenticate')).toBeNull()
    } finally {
      await t.close()
      await refusing.close()
    }
  })
})
