import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { dav, DAV, errorCode, parseMultistatus, propText } from './client.ts'
import { startDav, type DavHarness } from './harness.ts'
import { createMemoryContent } from './memory-content.ts'

const content = createMemoryContent()
let h: DavHarness
beforeAll(async () => {
  h = await startDav(content)
  expect((await dav(h.url, 'MKCOL', '/alice')).status).toBe(201)
})
afterAll(() => h.close())

describe('PUT and GET', () => {
  it('stores bytes and gives them back, 201 then 204 on replace, with ETag and OC-ETag', async () => {
    const put = await dav(h.url, 'PUT', '/alice/note.txt', { body: 'first version' })
    expect(put.status).toBe(201)
    const etag = put.headers.get('etag')
    expect(etag).toMatch(/^".+"$/)
    expect(put.headers.get('oc-etag')).toBe(etag)

    const get = await dav(h.url, 'GET', '/alice/note.txt')
    expect(get.status).toBe(200)
    expect(get.headers.get('etag')).toBe(etag)
    expect(get.headers.get('content-type')).toContain('text/plain')
    expect(await get.text()).toBe('first version')

    const replaced = await dav(h.url, 'PUT', '/alice/note.txt', { body: 'second' })
    expect(replaced.status).toBe(204)
    expect(replaced.headers.get('etag')).not.toBe(etag)
    expect(await (await dav(h.url, 'GET', '/alice/note.txt')).text()).toBe('second')
  })

  it('round-trips a multi-MiB binary file byte for byte', async () => {
    // 5 MiB + 3 bytes: not a multiple of any chunk size on the way.
    const bytes = randomBytes(5 * 1024 * 1024 + 3)
    expect((await dav(h.url, 'PUT', '/alice/big.bin', { body: bytes })).status).toBe(201)
    const res = await dav(h.url, 'GET', '/alice/big.bin')
    expect(res.headers.get('content-length')).toBe(String(bytes.length))
    expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).toBe(true)
  })

  it('stores an empty file', async () => {
    expect((await dav(h.url, 'PUT', '/alice/empty', { body: '' })).status).toBe(201)
    const res = await dav(h.url, 'GET', '/alice/empty')
    expect(res.status).toBe(200)
    expect(await res.text()).toBe('')
  })

  it('answers HEAD with the headers of GET and no body', async () => {
    await dav(h.url, 'PUT', '/alice/head.txt', { body: '12345' })
    const res = await dav(h.url, 'HEAD', '/alice/head.txt')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-length')).toBe('5')
    expect(res.headers.get('accept-ranges')).toBe('bytes')
    expect(await res.text()).toBe('')
  })

  it('keeps unicode and spaces in names', async () => {
    const path = '/alice/' + encodeURIComponent('Fotos été 2024 ☀.txt')
    expect((await dav(h.url, 'PUT', path, { body: 'sunny' })).status).toBe(201)
    expect((await h.namespace.get('/alice/Fotos été 2024 ☀.txt'))?.size).toBe(5)
    expect(await (await dav(h.url, 'GET', path)).text()).toBe('sunny')
  })

  it('refuses a PUT without parent (409) and on a folder (405)', async () => {
    const orphan = await dav(h.url, 'PUT', '/alice/nope/file.txt', { body: 'x' })
    expect(orphan.status).toBe(409)
    expect(await errorCode(orphan)).toBe('CONFLICT')
    expect((await dav(h.url, 'PUT', '/alice', { body: 'x' })).status).toBe(405)
    expect(await h.namespace.get('/alice/nope/file.txt')).toBeUndefined()
  })

  it('answers a clean 404 error, not a cut-off body, when the bytes are gone from the store', async () => {
    await dav(h.url, 'PUT', '/alice/lost.txt', { body: 'soon gone' })
    content.blobs.delete((await h.namespace.get('/alice/lost.txt'))!.cid!)
    const res = await dav(h.url, 'GET', '/alice/lost.txt')
    expect(res.status).toBe(404)
    expect(res.headers.get('etag')).toBeNull()
    expect(await errorCode(res)).toBe('NOT_FOUND')
  })

  it('lists a folder on GET', async () => {
    const res = await dav(h.url, 'GET', '/alice/')
    expect(res.status).toBe(200)
    expect((await res.text()).split('\n')).toContain('note.txt')
  })
})

describe('byte ranges', () => {
  const text = '0123456789abcdef'
  beforeAll(async () => {
    await dav(h.url, 'PUT', '/alice/range.txt', { body: text })
  })

  it.each([
    ['bytes=0-3', '0123', 'bytes 0-3/16'],
    ['bytes=10-', 'abcdef', 'bytes 10-15/16'],
    ['bytes=-4', 'cdef', 'bytes 12-15/16'],
    ['bytes=14-99', 'ef', 'bytes 14-15/16'],
  ])('%s → 206 %s', async (range, body, contentRange) => {
    const res = await dav(h.url, 'GET', '/alice/range.txt', { headers: { Range: range } })
    expect(res.status).toBe(206)
    expect(res.headers.get('content-range')).toBe(contentRange)
    expect(await res.text()).toBe(body)
  })

  it('answers 416 with the size for a range past the end', async () => {
    const res = await dav(h.url, 'GET', '/alice/range.txt', { headers: { Range: 'bytes=16-20' } })
    expect(res.status).toBe(416)
    expect(res.headers.get('content-range')).toBe('bytes */16')
  })

  it('sends the whole file for several ranges or a stale If-Range', async () => {
    const multi = await dav(h.url, 'GET', '/alice/range.txt', { headers: { Range: 'bytes=0-1,4-5' } })
    expect(multi.status).toBe(200)
    expect(await multi.text()).toBe(text)
    const stale = await dav(h.url, 'GET', '/alice/range.txt', { headers: { Range: 'bytes=0-1', 'If-Range': '"old"' } })
    expect(stale.status).toBe(200)
  })

  it('reads a range deep inside a multi-chunk file', async () => {
    const bytes = randomBytes(300_000)
    await dav(h.url, 'PUT', '/alice/chunks.bin', { body: bytes })
    const res = await dav(h.url, 'GET', '/alice/chunks.bin', { headers: { Range: 'bytes=65530-200000' } })
    expect(res.status).toBe(206)
    expect(Buffer.from(await res.arrayBuffer()).equals(bytes.subarray(65530, 200001))).toBe(true)
  })
})

describe('X-OC-Mtime', () => {
  it('sets the modification time and says so', async () => {
    const res = await dav(h.url, 'PUT', '/alice/old-photo.jpg', { body: 'jpeg', headers: { 'X-OC-Mtime': '1600000000' } })
    expect(res.status).toBe(201)
    expect(res.headers.get('x-oc-mtime')).toBe('accepted')
    expect((await h.namespace.get('/alice/old-photo.jpg'))?.modifiedMs).toBe(1_600_000_000_000)

    const pf = await dav(h.url, 'PROPFIND', '/alice/old-photo.jpg', { headers: { Depth: '0' } })
    const [result] = parseMultistatus(await pf.text())
    expect(propText(result, DAV, 'getlastmodified')).toBe(new Date(1_600_000_000_000).toUTCString())
    expect((await dav(h.url, 'HEAD', '/alice/old-photo.jpg')).headers.get('last-modified')).toBe(new Date(1_600_000_000_000).toUTCString())
  })

  it('refuses a value that is not unix seconds, and stores nothing', async () => {
    const res = await dav(h.url, 'PUT', '/alice/bad-mtime.txt', { body: 'x', headers: { 'X-OC-Mtime': 'yesterday' } })
    expect(res.status).toBe(400)
    expect(await h.namespace.get('/alice/bad-mtime.txt')).toBeUndefined()
  })

  it('does not claim acceptance when no mtime was sent', async () => {
    const res = await dav(h.url, 'PUT', '/alice/plain.txt', { body: 'x' })
    expect(res.headers.get('x-oc-mtime')).toBeNull()
  })
})

describe('conditional requests', () => {
  it('honours If-Match on PUT and If-None-Match on GET', async () => {
    const put = await dav(h.url, 'PUT', '/alice/cond.txt', { body: 'v1' })
    const etag = put.headers.get('etag')!
    expect((await dav(h.url, 'PUT', '/alice/cond.txt', { body: 'v2', headers: { 'If-Match': '"not-it"' } })).status).toBe(412)
    expect((await dav(h.url, 'PUT', '/alice/cond.txt', { body: 'v2', headers: { 'If-Match': etag } })).status).toBe(204)
    expect((await dav(h.url, 'PUT', '/alice/cond.txt', { body: 'v3', headers: { 'If-None-Match': '*' } })).status).toBe(412)
    const current = (await dav(h.url, 'HEAD', '/alice/cond.txt')).headers.get('etag')!
    expect((await dav(h.url, 'GET', '/alice/cond.txt', { headers: { 'If-None-Match': current } })).status).toBe(304)
  })
})
