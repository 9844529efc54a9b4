import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHash, randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { aliceAuth, basic, BOB, postMetadata, startBridgeOnRealGateway } from './helpers.ts'

const FILES = '/remote.php/dav/files/alice'
const UPLOADS = '/remote.php/dav/uploads/alice'
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex')

describe('Nextcloud chunked upload', () => {
  let t: Awaited<ReturnType<typeof startBridgeOnRealGateway>>
  const dav = (path: string, init: RequestInit & { headers?: Record<string, string> } = {}) =>
    fetch(`${t.url}${path}`, { ...init, headers: { authorization: aliceAuth, ...init.headers } })

  beforeAll(async () => {
    t = await startBridgeOnRealGateway()
  })
  afterAll(async () => {
    await t.close()
  })

  it('assembles chunks in numeric order into one file on the gateway', async () => {
    const data = randomBytes(3 * 1024 * 1024 + 17)
    const parts = [data.subarray(0, 1 << 20), data.subarray(1 << 20, 2 << 20), data.subarray(2 << 20)]
    const destination = `${t.url}${FILES}/chunked.bin`
    expect((await dav(`${UPLOADS}/web-file-upload-1`, { method: 'MKCOL', headers: { destination } })).status).toBe(201)
    // Sent out of order, with names that sort wrongly as text (10 < 9).
    expect((await dav(`${UPLOADS}/web-file-upload-1/10`, { method: 'PUT', body: parts[2], headers: { destination } })).status).toBe(201)
    expect((await dav(`${UPLOADS}/web-file-upload-1/1`, { method: 'PUT', body: parts[0], headers: { destination } })).status).toBe(201)
    expect((await dav(`${UPLOADS}/web-file-upload-1/9`, { method: 'PUT', body: parts[1], headers: { destination } })).status).toBe(201)

    const listing = await (await dav(`${UPLOADS}/web-file-upload-1`, { method: 'PROPFIND', headers: { depth: '1' } })).text()
    expect(listing).toContain(`<d:getcontentlength>${1 << 20}</d:getcontentlength>`)

    const move = await dav(`${UPLOADS}/web-file-upload-1/.file`, {
      method: 'MOVE',
      headers: { destination, 'oc-total-length': String(data.length), 'x-oc-mtime': '1700000000' },
    })
    expect(move.status).toBe(201)
    const back = Buffer.from(await (await dav(`${FILES}/chunked.bin`)).arrayBuffer())
    expect(back.length).toBe(data.length)
    expect(sha(back)).toBe(sha(data))
    // The upload folder is gone once assembled.
    expect((await dav(`${UPLOADS}/web-file-upload-1`, { method: 'PROPFIND', headers: { depth: '0' } })).status).toBe(404)
    expect(existsSync(join(t.dataDir, 'uploads', 'alice', 'web-file-upload-1'))).toBe(false)

    const meta = await postMetadata({ url: t.url, body: { filePath: '/chunked.bin' } })
    expect(meta.status).toBe(200)
    expect(meta.body.metadata.file).toMatchObject({ path: '/', file: 'chunked.bin' })
  })

  it('refuses an assembly whose total length does not match', async () => {
    expect((await dav(`${UPLOADS}/u2`, { method: 'MKCOL' })).status).toBe(201)
    await dav(`${UPLOADS}/u2/1`, { method: 'PUT', body: 'abc' })
    const move = await dav(`${UPLOADS}/u2/.file`, {
      method: 'MOVE',
      headers: { destination: `${t.url}${FILES}/short.txt`, 'oc-total-length': '99' },
    })
    expect(move.status).toBe(400)
    expect((await dav(`${FILES}/short.txt`)).status).toBe(404)
  })

  it('aborts with DELETE', async () => {
    expect((await dav(`${UPLOADS}/u3`, { method: 'MKCOL' })).status).toBe(201)
    expect((await dav(`${UPLOADS}/u3`, { method: 'MKCOL' })).status).toBe(405)
    await dav(`${UPLOADS}/u3/1`, { method: 'PUT', body: 'x' })
    expect((await dav(`${UPLOADS}/u3`, { method: 'DELETE' })).status).toBe(204)
    expect((await dav(`${UPLOADS}/u3/1`, { method: 'PUT', body: 'x' })).status).toBe(409)
  })

  it('keeps users apart and refuses hostile names', async () => {
    const other = await fetch(`${t.url}/remote.php/dav/uploads/bob/x`, { method: 'MKCOL', headers: { authorization: aliceAuth } })
    expect(other.status).toBe(403)
    expect((await dav(`${UPLOADS}/..%2f..%2fetc`, { method: 'MKCOL' })).status).toBe(400)
    expect((await dav(`${UPLOADS}/.hidden`, { method: 'MKCOL' })).status).toBe(400)
    expect((await dav(`${UPLOADS}/u4`, { method: 'MKCOL' })).status).toBe(201)
    await dav(`${UPLOADS}/u4/1`, { method: 'PUT', body: 'x' })
    const outside = await dav(`${UPLOADS}/u4/.file`, { method: 'MOVE', headers: { destination: `${t.url}/remote.php/dav/files/bob/x` } })
    expect(outside.status).toBe(403)
    const bobMove = await fetch(`${t.url}${UPLOADS}/u4/.file`, {
      method: 'MOVE',
      headers: { authorization: basic(BOB.user, BOB.password), destination: `${t.url}/remote.php/dav/files/bob/x` },
    })
    expect(bobMove.status).toBe(403)
  })
})
