/**
 * Chunked uploads raced and abused as clients really do it: a chunk PUT
 * against a DELETE of its folder, the final MOVE against a DELETE, a client
 * hanging up mid-chunk, thousands of upload folders. Each answer is what
 * sabre/dav gives (201/204, 404, 409, 507), never a 5xx, and nothing is left
 * behind on the bridge's disk.
 */
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createUploadStore } from '../../server/bridge/upload-store.ts'
import { aliceAuth, startBridgeOnRealGateway } from './helpers.ts'

const FILES = '/remote.php/dav/files/alice'
const UPLOADS = '/remote.php/dav/uploads/alice'

describe('chunked uploads raced against DELETE', () => {
  let t: Awaited<ReturnType<typeof startBridgeOnRealGateway>>
  const lines: { level: number; msg: string }[] = []
  const dav = (path: string, init: RequestInit & { headers?: Record<string, string> } = {}) =>
    fetch(`${t.url}${path}`, { ...init, headers: { authorization: aliceAuth, ...init.headers } })
  const leftovers = () => readdirSync(join(t.dataDir, 'uploads', 'alice'))

  // Node's warnings of this process (the bridge runs in it), e.g. a listener count that looks like a leak.
  const warnings: string[] = []
  const onWarning = (w: Error) => void warnings.push(`${w.name}: ${w.message}`)

  beforeAll(async () => {
    process.on('warning', onWarning)
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) })
    t = await startBridgeOnRealGateway({ maxUploadsPerUser: 5 }, { logger })
  })
  afterAll(async () => {
    process.off('warning', onWarning)
    await t.close()
  })

  it('a chunk PUT racing the DELETE of its folder gets 201 or 409, the DELETE 204, and nothing stays', async () => {
    const chunk = randomBytes(256 * 1024)
    for (let round = 0; round < 40; round++) {
      const upload = `${UPLOADS}/race-put-${round}`
      expect((await dav(upload, { method: 'MKCOL' })).status).toBe(201)
      const [put, del] = await Promise.all([dav(`${upload}/1`, { method: 'PUT', body: chunk }), dav(upload, { method: 'DELETE' })])
      expect([201, 409]).toContain(put.status)
      expect(del.status).toBe(204)
    }
    expect(leftovers()).toEqual([])
  })

  it('the final MOVE racing a DELETE: either the file is stored whole (DELETE 404) or not at all (MOVE 404)', async () => {
    const data = randomBytes(512 * 1024)
    for (let round = 0; round < 20; round++) {
      const upload = `${UPLOADS}/race-move-${round}`
      const destination = `${t.url}${FILES}/raced-${round}.bin`
      expect((await dav(upload, { method: 'MKCOL' })).status).toBe(201)
      expect((await dav(`${upload}/1`, { method: 'PUT', body: data })).status).toBe(201)
      const [move, del] = await Promise.all([
        dav(`${upload}/.file`, { method: 'MOVE', headers: { destination, 'oc-total-length': String(data.length) } }),
        dav(upload, { method: 'DELETE' }),
      ])
      expect([201, 404]).toContain(move.status)
      expect(del.status).toBe(move.status === 201 ? 404 : 204)
      const stored = await dav(`${FILES}/raced-${round}.bin`)
      if (move.status === 201) expect(Buffer.from(await stored.arrayBuffer()).equals(data)).toBe(true)
      else expect(stored.status).toBe(404)
    }
    // The assembled uploads are removed once the answer is out.
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(leftovers()).toEqual([])
  })

  it('logs a client hanging up mid-chunk as the abort it is, not as an error', async () => {
    const upload = `${UPLOADS}/hang-up`
    expect((await dav(upload, { method: 'MKCOL' })).status).toBe(201)
    const before = lines.length
    await new Promise<void>((resolve) => {
      const url = new URL(`${t.url}${upload}/1`)
      const req = request({
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'PUT',
        headers: { authorization: aliceAuth, 'content-length': String(4 << 20) },
      })
      req.on('error', () => resolve())
      req.write(randomBytes(256 * 1024), () => setTimeout(() => req.destroy(), 100))
    })
    await new Promise((resolve) => setTimeout(resolve, 300))
    const logged = lines.slice(before)
    expect(logged.filter((l) => l.level >= 50)).toEqual([])
    expect(logged.some((l) => /hung up/.test(l.msg))).toBe(true)
    expect(readdirSync(join(t.dataDir, 'uploads', 'alice')).filter((n) => n.startsWith('.part-'))).toEqual([])
    expect((await dav(upload, { method: 'DELETE' })).status).toBe(204)
  })

  it('caps the unfinished uploads a user holds with 507, and takes new ones once some are gone', async () => {
    for (let i = 0; i < 5; i++) expect((await dav(`${UPLOADS}/many-${i}`, { method: 'MKCOL' })).status).toBe(201)
    const refused = await dav(`${UPLOADS}/many-5`, { method: 'MKCOL' })
    expect(refused.status).toBe(507)
    expect(await refused.text()).toContain('Too many unfinished uploads')
    expect((await dav(`${UPLOADS}/many-0`, { method: 'DELETE' })).status).toBe(204)
    expect((await dav(`${UPLOADS}/many-5`, { method: 'MKCOL' })).status).toBe(201)
    for (let i = 1; i <= 5; i++) await dav(`${UPLOADS}/many-${i}`, { method: 'DELETE' })
  })

  it('never sweeps old uploads on a request: MKCOL leaves a day-old upload for the timer', async () => {
    expect((await dav(`${UPLOADS}/old-one`, { method: 'MKCOL' })).status).toBe(201)
    const old = (Date.now() - 48 * 3600_000) / 1000
    utimesSync(join(t.dataDir, 'uploads', 'alice', 'old-one'), old, old)
    expect((await dav(`${UPLOADS}/new-one`, { method: 'MKCOL' })).status).toBe(201)
    expect(leftovers().sort()).toEqual(['new-one', 'old-one'])
    for (const name of ['old-one', 'new-one']) await dav(`${UPLOADS}/${name}`, { method: 'DELETE' })
  })

  it("raises no warning of Node on the way (the proxied response's close listeners are a fixed count, not a leak)", () => {
    expect(warnings.filter((w) => w.startsWith('MaxListenersExceededWarning'))).toEqual([])
  })
})

describe('sweeping old uploads', () => {
  let dir: string
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'uploads-sweep-'))
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('goes through the folders a bounded step at a time and removes only those untouched for the age', async () => {
    const store = createUploadStore(dir)
    const old = (Date.now() - 25 * 3600_000) / 1000
    for (let i = 0; i < 5; i++) {
      mkdirSync(join(dir, 'alice', `old-${i}`), { recursive: true })
      utimesSync(join(dir, 'alice', `old-${i}`), old, old)
    }
    mkdirSync(join(dir, 'alice', 'fresh'))
    expect(await store.sweepStep(24 * 3600_000, 2)).toBe(2)
    // At most two looked at, so at most two removed.
    expect(readdirSync(join(dir, 'alice')).length).toBeGreaterThanOrEqual(4)
    expect(await store.sweepStep(24 * 3600_000, 2)).toBe(2)
    expect(await store.sweepStep(24 * 3600_000, 2)).toBe(2)
    expect(readdirSync(join(dir, 'alice'))).toEqual(['fresh'])
  })

  it('runs one step at a time on its timer, and stops when told', async () => {
    const store = createUploadStore(dir)
    const old = (Date.now() - 25 * 3600_000) / 1000
    mkdirSync(join(dir, 'bob', 'stale'), { recursive: true })
    utimesSync(join(dir, 'bob', 'stale'), old, old)
    const stop = store.startSweeping({
      intervalMs: 20,
      onError: (err) => {
        throw err
      },
    })
    await new Promise((resolve) => setTimeout(resolve, 200))
    stop()
    expect(readdirSync(join(dir, 'bob'))).toEqual([])
  })
})
