/**
 * The bridge's own disk (chunks of Nextcloud chunked uploads) really full:
 * a small tmpfs (root only; skipped elsewhere, with the reason). A chunk that
 * cannot be written is a 507 in Sabre's error format, leaves no partial
 * chunk behind, and the same upload goes on once space is freed; a chunk
 * that would use the room kept for sealing is refused before that. A login,
 * which needs no write, still works.
 */
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mountSmallDisk, tmpfsUnavailable, type SmallDisk } from '../helpers/tmpfs.ts'
import { aliceAuth, startBridgeOnRealGateway } from './helpers.ts'

const UPLOADS = '/remote.php/dav/uploads/alice'

describe.skipIf(tmpfsUnavailable)(`chunked uploads on a full disk${tmpfsUnavailable ? ` (skipped: ${tmpfsUnavailable})` : ''}`, () => {
  let disk: SmallDisk
  let t: Awaited<ReturnType<typeof startBridgeOnRealGateway>>
  const dav = (path: string, init: RequestInit & { headers?: Record<string, string> } = {}) =>
    fetch(`${t.url}${path}`, { ...init, headers: { authorization: aliceAuth, ...init.headers } })

  beforeAll(async () => {
    disk = mountSmallDisk(16 * 1024 * 1024)
    t = await startBridgeOnRealGateway({ dataDir: disk.dir })
  })
  afterAll(async () => {
    disk?.free()
    await t?.close()
    disk?.unmount()
  })

  it('answers 507 for a chunk that does not fit, keeps no part of it, and takes it once space is freed', async () => {
    expect((await dav(`${UPLOADS}/upload-1`, { method: 'MKCOL' })).status).toBe(201)
    disk.fill()
    const chunk = randomBytes(2 * 1024 * 1024)
    const refused = await dav(`${UPLOADS}/upload-1/1`, { method: 'PUT', body: chunk })
    expect(refused.status).toBe(507)
    expect(await refused.text()).toContain('<s:exception>INSUFFICIENT_STORAGE</s:exception>')
    const listing = await (await dav(`${UPLOADS}/upload-1`, { method: 'PROPFIND', headers: { depth: '1' } })).text()
    expect(listing).not.toContain(`${UPLOADS}/upload-1/1<`)

    disk.free()
    // Free space is read at most once a second.
    await new Promise((resolve) => setTimeout(resolve, 1_100))
    expect((await dav(`${UPLOADS}/upload-1/1`, { method: 'PUT', body: chunk })).status).toBe(201)
    const after = await (await dav(`${UPLOADS}/upload-1`, { method: 'PROPFIND', headers: { depth: '1' } })).text()
    expect(after).toContain(`<d:getcontentlength>${chunk.length}</d:getcontentlength>`)
  })

  it('refuses a chunk that would use the room kept for sealing, before the disk is full, and takes a smaller one', async () => {
    expect((await dav(`${UPLOADS}/upload-2`, { method: 'MKCOL' })).status).toBe(201)
    // 2 % of this 16 MiB disk (about 0.3 MiB) is kept; 1.5 MiB free takes 1 MiB more, not 1.4 MiB.
    disk.fill(1.5 * 1024 * 1024)
    try {
      // Free space is read at most once a second.
      await new Promise((resolve) => setTimeout(resolve, 1_100))
      const refused = await dav(`${UPLOADS}/upload-2/1`, { method: 'PUT', body: randomBytes(1.4 * 1024 * 1024) })
      expect(refused.status).toBe(507)
      expect(refused.headers.get('retry-after')).toBe('60')
      expect(await refused.text()).toMatch(/kept for sealing what is already stored.*nothing was stored/)
      expect((await dav(`${UPLOADS}/upload-2/1`, { method: 'PUT', body: randomBytes(1024 * 1024) })).status).toBe(201)
    } finally {
      disk.free()
    }
  })

  it('logs in with the disk full (nothing needs writing), and a wrong password is still a 401', async () => {
    disk.fill()
    const form = (password: string) =>
      fetch(`${t.url}/login`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ user: 'alice', password }).toString(),
      })
    try {
      expect((await form('not-her-password')).status).toBe(401)
      const ok = await form('alice-password-1')
      expect(ok.status).toBe(303)
      const cookie = ok.headers
        .getSetCookie()
        .map((c) => c.split(';')[0])
        .join('; ')
      // The session works on the next request, though it could not be written down.
      const page = await fetch(`${t.url}/`, { headers: { cookie } })
      expect(await page.text()).not.toContain('name="password"')
    } finally {
      disk.free()
    }
  })
})
