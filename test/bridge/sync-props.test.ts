import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHash } from 'node:crypto'
import { aliceAuth, startBridgeOnRealGateway } from './helpers.ts'

/**
 * The properties Nextcloud's desktop and mobile clients read to sync
 * (apps/dav's FilesPlugin: oc:id, oc:fileid, oc:permissions, oc:size,
 * oc:checksums), and the etags they compare to find changes.
 */
const FILES = '/remote.php/dav/files/alice'
const PROPS =
  '<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop>' +
  '<d:getetag/><oc:id/><oc:fileid/><oc:permissions/><oc:size/><oc:checksums/></d:prop></d:propfind>'

describe('sync properties over the app surface', () => {
  let t: Awaited<ReturnType<typeof startBridgeOnRealGateway>>
  const dav = (method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
    fetch(`${t.url}${FILES}${path}`, { method, headers: { authorization: aliceAuth, ...headers }, body })
  /** PROPFIND Depth 0 → the property texts by local name. */
  const props = async (path: string) => {
    const res = await dav('PROPFIND', path, { depth: '0', 'content-type': 'application/xml' }, PROPS)
    expect(res.status).toBe(207)
    const xml = await res.text()
    const ok = xml.split('</d:propstat>').find((s) => s.includes('200 OK')) ?? ''
    const value = (name: string) => new RegExp(`<${name}>([\\s\\S]*?)</${name}>`).exec(ok)?.[1]
    return {
      etag: value('d:getetag'),
      id: value('oc:id'),
      fileid: value('oc:fileid'),
      permissions: value('oc:permissions'),
      size: value('oc:size'),
      checksums: value('oc:checksums'),
    }
  }

  beforeAll(async () => {
    t = await startBridgeOnRealGateway()
    expect((await dav('MKCOL', '/docs')).status).toBe(201)
    expect((await dav('MKCOL', '/docs/deep')).status).toBe(201)
    expect((await dav('PUT', '/docs/a.txt', {}, 'twelve bytes')).status).toBe(201)
  })
  afterAll(() => t.close())

  it('gives files and folders ids, permissions and sizes', async () => {
    const file = await props('/docs/a.txt')
    expect(file.fileid).toMatch(/^\d+$/)
    expect(file.id).toMatch(new RegExp(`^0*${file.fileid}oc[0-9a-f]{10}$`))
    expect(file.permissions).toBe('GDNVW')
    expect(file.size).toBe('12')
    const folder = await props('/docs')
    expect(folder.permissions).toBe('GDNVCK')
    expect(folder.size).toBe('12')
    expect(folder.fileid).not.toBe(file.fileid)
  })

  it("keeps a file's id across a rename and gives a copy a new one", async () => {
    const before = await props('/docs/a.txt')
    expect((await dav('MOVE', '/docs/a.txt', { destination: `${t.url}${FILES}/docs/b.txt` })).status).toBe(201)
    const moved = await props('/docs/b.txt')
    expect(moved.id).toBe(before.id)
    expect((await dav('COPY', '/docs/b.txt', { destination: `${t.url}${FILES}/docs/c.txt` })).status).toBe(201)
    expect((await props('/docs/c.txt')).id).not.toBe(before.id)
  })

  it('changes the etag of every folder up to the root when something deep inside changes', async () => {
    const root = await props('/')
    const docs = await props('/docs')
    expect((await dav('PUT', '/docs/deep/new.txt', {}, 'x')).status).toBe(201)
    expect((await props('/')).etag).not.toBe(root.etag)
    expect((await props('/docs')).etag).not.toBe(docs.etag)
  })

  it('verifies an uploaded OC-Checksum, keeps it for oc:checksums, and refuses a wrong one', async () => {
    const body = 'checked content'
    const sha1 = createHash('sha1').update(body).digest('hex')
    expect((await dav('PUT', '/docs/sum.txt', { 'oc-checksum': `SHA1:${sha1}` }, body)).status).toBe(201)
    expect((await props('/docs/sum.txt')).checksums).toBe(`<oc:checksum>SHA1:${sha1}</oc:checksum>`)
    const wrong = await dav('PUT', '/docs/sum.txt', { 'oc-checksum': `SHA1:${'0'.repeat(40)}` }, 'other content')
    expect(wrong.status).toBe(400)
    expect(await (await dav('GET', '/docs/sum.txt')).text()).toBe(body)
  })
})
