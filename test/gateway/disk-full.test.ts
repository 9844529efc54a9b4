/**
 * A full disk under the gateway's data folder, made for real: a small tmpfs
 * (root only; skipped elsewhere, with the reason) filled to the last byte.
 * Writes answer 507 and store nothing, a DELETE still works, reads and
 * /file-info keep working, the
 * group idle timer and sealing (SQLite state change, CAR file) fail without
 * ending the process, each logged once, the stuck group says it waits for
 * disk space, and everything resumes by itself
 * once space is freed.
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createGateway, type Gateway } from '../../server/gateway/index.ts'
import { startServer, type RunningServer } from '../../server/shared/http.ts'
import { mountSmallDisk, tmpfsUnavailable, type SmallDisk } from '../helpers/tmpfs.ts'

const lines: Record<string, unknown>[] = []
const logger = pino(
  { level: 'info' },
  new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line))
      done()
    },
  }),
)
const logged = (msg: string) => lines.filter((l) => typeof l.msg === 'string' && l.msg.startsWith(msg)).length

const waitFor = async (what: string, probe: () => Promise<boolean> | boolean, ms = 15_000) => {
  const until = Date.now() + ms
  while (Date.now() < until) {
    if (await probe()) return
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`timed out waiting for ${what}`)
}

describe.skipIf(tmpfsUnavailable)(`gateway on a full disk${tmpfsUnavailable ? ` (skipped: ${tmpfsUnavailable})` : ''}`, () => {
  let disk: SmallDisk
  let gateway: Gateway
  let server: RunningServer
  const url = (path: string) => `${server.url}${path}`
  const first = randomBytes(200_000)

  beforeAll(async () => {
    disk = mountSmallDisk(24 * 1024 * 1024)
    gateway = await createGateway({ host: '127.0.0.1', port: 0, dataDir: disk.dir, groupSize: 64 << 20, groupIdleSeconds: 0.3 }, { logger })
    // Retries every 100 ms so the test sees the recovery quickly.
    server = await startServer(gateway.app, 0)
  })
  afterAll(async () => {
    disk?.free()
    await server?.close(100)
    await gateway?.close()
    disk?.unmount()
  })

  it('refuses writes with 507 while the disk is full, keeps reads working, and resumes once space is freed', async () => {
    expect((await fetch(url('/first.bin'), { method: 'PUT', body: first })).status).toBe(201)
    expect((await fetch(url('/unwanted.bin'), { method: 'PUT', body: randomBytes(1_000) })).status).toBe(201)
    disk.fill()

    // A DELETE, how a person frees space, is recorded even at 0 bytes free (the room held for it is given up).
    expect((await fetch(url('/unwanted.bin'), { method: 'DELETE' })).status).toBe(204)
    expect(await gateway.namespace.get('/unwanted.bin')).toBeUndefined()
    disk.fill()

    // Writes: 507, nothing named.
    const put = await fetch(url('/second.bin'), { method: 'PUT', body: randomBytes(1_000_000) })
    expect(put.status).toBe(507)
    expect(await put.text()).toContain('INSUFFICIENT_STORAGE')
    expect(await gateway.namespace.get('/second.bin')).toBeUndefined()
    expect((await fetch(url('/second.bin'))).status).toBe(404)
    const mkcol = await fetch(url('/folder'), { method: 'MKCOL' })
    expect(mkcol.status).toBe(507)
    expect(await gateway.namespace.get('/folder')).toBeUndefined()
    const copy = await fetch(url('/first.bin'), { method: 'COPY', headers: { Destination: url('/copy.bin') } })
    expect(copy.status).toBe(507)
    expect(await gateway.namespace.get('/copy.bin')).toBeUndefined()

    // Reads and /file-info keep working.
    const read = await fetch(url('/first.bin'))
    expect(read.status).toBe(200)
    expect(Buffer.from(await read.arrayBuffer()).equals(first)).toBe(true)
    const info = await fetch(url('/file-info'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ filePath: '/first.bin' }),
    })
    expect(info.status).toBe(200)

    // The idle group cannot be sealed (state change or CAR write fails) several times over: the process lives on, one log line.
    await new Promise((r) => setTimeout(r, 2_500))
    const group = async () => (await gateway.content.groupsOf((await gateway.namespace.get('/first.bin'))!.cid!))[0]
    expect((await group()).state).not.toBe('ready_for_deals')
    const failures = logged('closing the idle group failed') + logged('sealing group failed')
    expect(failures).toBe(1)
    // The stuck group says it waits for disk space (a reason that asks for attention), not for more data.
    const record = await fetch(url('/file-info'), { method: 'POST', body: JSON.stringify({ filePath: '/first.bin', verbose: true }) })
    expect((await record.json()).result.file.details.groups[0]).toMatchObject({
      reasonCode: 'WAITING_FOR_DISK_SPACE',
      reason: expect.stringMatching(/^waiting for disk space/),
    })

    // Space is freed: the group seals by itself and uploads work again.
    disk.free()
    await waitFor('the group to be sealed', async () => (await group()).state === 'ready_for_deals')
    expect((await group()).pieceCid).toMatch(/^baga6ea4seaq/)
    // Free space is read at most once a second (the record above read it while full).
    await new Promise((resolve) => setTimeout(resolve, 1_100))
    expect((await fetch(url('/second.bin'), { method: 'PUT', body: randomBytes(1_000) })).status).toBe(201)
    expect((await fetch(url('/folder'), { method: 'MKCOL' })).status).toBe(201)
  }, 30_000)
})

describe('room kept for sealing', () => {
  let gateway: Gateway
  let server: RunningServer
  let dir: string
  let free = 10 * 1024 ** 3
  const url = (path: string) => `${server.url}${path}`

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gateway-reserve-'))
    // The disk looks as full as the test says; what is written is real.
    gateway = await createGateway(
      { host: '127.0.0.1', port: 0, dataDir: dir, groupSize: 64 << 20, groupIdleSeconds: 3600, diskReserveBytes: 1 << 20 },
      { logger, freeBytes: async () => free },
    )
    server = await startServer(gateway.app, 0)
  })
  afterAll(async () => {
    await server?.close(100)
    await gateway?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('refuses an upload with 507 a margin before the disk is full, counting what is still to be sealed', async () => {
    const stored = randomBytes(3 << 20)
    expect((await fetch(url('/stored.bin'), { method: 'PUT', body: stored })).status).toBe(201)
    // 5 MiB free: 3 MiB still to seal + 1 MiB kept + this 2 MiB upload do not fit.
    free = 5 << 20
    // Free space is read at most once a second.
    await new Promise((resolve) => setTimeout(resolve, 1_100))
    const refused = await fetch(url('/next.bin'), { method: 'PUT', body: randomBytes(2 << 20) })
    expect(refused.status).toBe(507)
    expect(refused.headers.get('retry-after')).toBe('60')
    expect(await refused.text()).toMatch(/kept for sealing what is already stored/)
    expect((await fetch(url('/next.bin'))).status).toBe(404)
    // A small one still fits, and everything does once space is back.
    expect((await fetch(url('/small.bin'), { method: 'PUT', body: randomBytes(100_000) })).status).toBe(201)
    free = 10 * 1024 ** 3
    await new Promise((resolve) => setTimeout(resolve, 1_100))
    expect((await fetch(url('/next.bin'), { method: 'PUT', body: randomBytes(2 << 20) })).status).toBe(201)
  })
})
