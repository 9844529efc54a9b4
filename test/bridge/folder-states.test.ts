/**
 * `POST /ocs/v2.php/apps/gateway/get-folder-states`: the Files list's badges
 * for a whole folder in one request, on the real gateway (embedded default)
 * and on Nextcloud's External Storage mounts; only the caller's own tree; a
 * gateway without folder states means no badges, never an error; hostile
 * input gets the app's envelope.
 */
import { request, type IncomingHttpHeaders } from 'node:http'
import { gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FolderStatesResponseSchema } from '../../server/shared/contracts/folder-states.ts'
import { expectToMatch } from '../helpers/contracts.ts'
import {
  aliceAuth,
  basic,
  BOB,
  postMetadata,
  startBridge,
  startBridgeOnRealGateway,
  startFakeGateway,
  type MetadataCall,
} from './helpers.ts'
import { ncAlice, startNextcloudSetup } from './nextcloud-helpers.ts'

const ROUTE = '/ocs/v2.php/apps/gateway/get-folder-states'
const states = (call: Omit<MetadataCall, 'route'>) => postMetadata({ ...call, route: ROUTE })

describe('get-folder-states on the real gateway', () => {
  let t: Awaited<ReturnType<typeof startBridgeOnRealGateway>>
  const put = async (path: string, body: string) => {
    const res = await fetch(`${t.url}/remote.php/dav/files/alice${path}`, { method: 'PUT', headers: { authorization: aliceAuth }, body })
    expect(res.status).toBe(201)
  }

  beforeAll(async () => {
    t = await startBridgeOnRealGateway()
    for (const folder of ['/docs', '/docs/sub']) {
      expect(
        (await fetch(`${t.url}/remote.php/dav/files/alice${folder}`, { method: 'MKCOL', headers: { authorization: aliceAuth } })).status,
      ).toBe(201)
    }
    await put('/docs/a.txt', 'first\n')
    await put('/docs/b.txt', 'second\n')
    await put('/docs/sub/c.txt', 'third\n')
  })
  afterAll(() => t.close())

  it('answers every entry of the folder with the state and CID of its own record, and where IPFS opens it', async () => {
    const res = await states({ url: t.url, body: { folderPath: '/docs' } })
    expect(res.status).toBe(200)
    expectToMatch(FolderStatesResponseSchema, res.body)
    expect(res.body.folder.path).toBe('/docs')
    expect(res.body.folder.ipfsGateway).toBe('https://ipfs.io')
    expect(res.body.folder.entries.map((e: { name: string }) => e.name)).toEqual(['a.txt', 'b.txt', 'sub'])
    for (const entry of res.body.folder.entries) {
      const record = await postMetadata({ url: t.url, body: { filePath: `/docs/${entry.name}` } })
      expect(entry).toMatchObject({
        cid: record.body.metadata.file.cid,
        state: record.body.metadata.file.details.state,
        retrievableCopies: 0,
      })
    }
    expect(res.body.folder.entries[0].state).toBe('Staging')
  })

  it('takes the WebDAV form of the path and the root folder', async () => {
    const webdav = await states({ url: t.url, body: { folderPath: '/remote.php/dav/files/alice/docs/' } })
    expect(webdav.body.folder.entries).toHaveLength(3)
    const root = await states({ url: t.url, body: { folderPath: '/' } })
    expect(root.body.folder).toMatchObject({ path: '/', entries: [expect.objectContaining({ name: 'docs', state: 'Staging' })] })
  })

  it("never shows another user's files: bob's /docs is his own, and empty", async () => {
    const res = await states({ url: t.url, auth: basic(BOB.user, BOB.password), body: { folderPath: '/docs' } })
    expect(res).toMatchObject({ status: 200, body: { success: true, folder: { path: '/docs', entries: [] } } })
    const other = await states({ url: t.url, body: { folderPath: '/remote.php/dav/files/bob/docs' } })
    expect(other).toMatchObject({ status: 404, body: { success: false } })
  })

  it("answers 400 saying so for a file's path, not a gateway failure", async () => {
    const res = await states({ url: t.url, body: { folderPath: '/docs/a.txt' } })
    expect(res).toMatchObject({ status: 400, body: { success: false, error: expect.stringMatching(/names a file, not a folder/) } })
  })

  it('answers only the rows asked for by name, each as in the whole answer; names not on the gateway are absent', async () => {
    const whole = await states({ url: t.url, body: { folderPath: '/docs' } })
    const some = await states({ url: t.url, body: { folderPath: '/docs', names: ['sub', 'a.txt', 'not-there.txt', 'a.txt'] } })
    expect(some.status).toBe(200)
    expectToMatch(FolderStatesResponseSchema, some.body)
    const byName = (name: string) => whole.body.folder.entries.find((e: { name: string }) => e.name === name)
    expect(some.body.folder.entries).toEqual([byName('sub'), byName('a.txt')])
    const tooMany = await states({ url: t.url, body: { folderPath: '/docs', names: Array.from({ length: 501 }, (_, i) => `f${i}`) } })
    expect(tooMany).toMatchObject({ status: 400, body: { success: false, error: expect.stringMatching(/more than 500 names/) } })
  })

  it('answers 304 with no body to a request whose If-None-Match names its answer, until something in the folder changes', async () => {
    const body = { folderPath: '/docs', names: ['a.txt', 'b.txt', 'new.txt'] }
    const first = await states({ url: t.url, body })
    const etag = first.headers.get('etag')!
    expect(etag).toMatch(/^"[\w-]+"$/)
    const again = await states({ url: t.url, body, headers: { 'if-none-match': etag } })
    expect({ status: again.status, body: again.body }).toEqual({ status: 304, body: '' })
    // Other rows, or the whole folder, are another answer: never a 304 for what the client has not seen.
    expect((await states({ url: t.url, body: { folderPath: '/docs' }, headers: { 'if-none-match': etag } })).status).toBe(200)
    await put('/docs/new.txt', 'a new file\n')
    const changed = await states({ url: t.url, body, headers: { 'if-none-match': etag } })
    expect(changed.status).toBe(200)
    expect(changed.headers.get('etag')).not.toBe(etag)
    expect(changed.body.folder.entries.map((e: { name: string }) => e.name)).toEqual(['a.txt', 'b.txt', 'new.txt'])
  })

  it('gzips a whole folder for a client that takes gzip, to the same answer, and sends it plain to one that does not', async () => {
    const raw = (acceptEncoding?: string) =>
      new Promise<{ headers: IncomingHttpHeaders; bytes: Buffer }>((resolve, reject) => {
        const req = request(`${t.url}${ROUTE}`, {
          method: 'POST',
          headers: {
            authorization: aliceAuth,
            'ocs-apirequest': 'true',
            'content-type': 'application/json',
            ...(acceptEncoding ? { 'accept-encoding': acceptEncoding } : {}),
          },
        })
        req.on('response', (res) => {
          const chunks: Buffer[] = []
          res.on('data', (c: Buffer) => chunks.push(c))
          res.on('end', () => resolve({ headers: res.headers, bytes: Buffer.concat(chunks) }))
        })
        req.on('error', reject)
        req.end(JSON.stringify({ folderPath: '/docs' }))
      })
    const plain = await raw()
    expect(plain.headers['content-encoding']).toBeUndefined()
    const answer = JSON.parse(plain.bytes.toString('utf8'))
    expect(answer.folder.entries.map((e: { name: string }) => e.name)).toContain('a.txt')
    for (const taken of ['gzip, deflate, br', '*']) {
      const zipped = await raw(taken)
      expect(zipped.headers).toMatchObject({ 'content-encoding': 'gzip', vary: 'Accept-Encoding' })
      expect(JSON.parse(gunzipSync(zipped.bytes).toString('utf8'))).toEqual(answer)
    }
    for (const refused of ['br', 'gzip;q=0, br', 'identity']) expect((await raw(refused)).headers['content-encoding']).toBeUndefined()
  })

  it('checks credentials, then the OCS header, then the body', async () => {
    expect((await states({ url: t.url, auth: null, body: {} })).status).toBe(401)
    expect((await states({ url: t.url, auth: basic('alice', 'wrong'), body: { folderPath: '/docs' } })).status).toBe(401)
    expect((await states({ url: t.url, headers: { 'ocs-apirequest': '' }, body: { folderPath: '/docs' } })).status).toBe(412)
  })

  it.each([
    ['no folderPath', {}],
    ['a number', { folderPath: 42 }],
    ['an empty path', { folderPath: '' }],
    ['a ".." segment', { folderPath: '/docs/../../bob' }],
    ['an encoded ".."', { folderPath: '/remote.php/dav/files/alice/%2e%2e/bob' }],
    ['a NUL', { folderPath: '/docs\0' }],
    ['a backslash', { folderPath: '/docs\\..\\bob' }],
    ['an unknown field', { folderPath: '/docs', recursive: true }],
    ['a path over 4096 characters', { folderPath: '/' + 'd'.repeat(5000) }],
  ])('answers 400 in the envelope for %s', async (_what, body) => {
    const res = await states({ url: t.url, body })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ success: false, error: expect.any(String) })
  })

  it('answers 400 for a body that is not JSON or not JSON-typed, and 413 over 64 KiB', async () => {
    expect((await states({ url: t.url, raw: '{"folderPath":' })).status).toBe(400)
    expect((await states({ url: t.url, headers: { 'content-type': 'text/plain' }, body: { folderPath: '/docs' } })).status).toBe(400)
    const huge = await states({ url: t.url, body: { folderPath: '/docs', pad: 'x'.repeat(70_000) } })
    expect(huge).toMatchObject({ status: 413, body: { success: false } })
  })
})

describe('get-folder-states elsewhere', () => {
  it('answers no entries, not an error, from a gateway without folder states; no IPFS link on the simulated network', async () => {
    const gateway = await startFakeGateway(() => {})
    const t = await startBridge(gateway.url, { network: 'simnet' })
    try {
      const res = await states({ url: t.url, body: { folderPath: '/docs' } })
      expect(res).toMatchObject({ status: 200, body: { success: true, folder: { path: '/docs', entries: [] } } })
      expect(res.body.folder.ipfsGateway).toBeUndefined()
      expect(gateway.requests.at(-1)).toMatchObject({ url: '/folder-states', body: { folderPath: '/alice/docs' } })
    } finally {
      await t.close()
      await gateway.close()
    }
  })

  it("keeps the gateway's answer and asks again with its ETag: an unchanged folder is a 304 from the gateway, not parsed again", async () => {
    const seen: (string | undefined)[] = []
    const gateway = await startFakeGateway((app) =>
      app.post('/folder-states', (req, res) => {
        seen.push(req.headers['if-none-match'])
        res.setHeader('etag', '"g1"')
        if (req.headers['if-none-match'] === '"g1"') return void res.status(304).end()
        res.json({
          success: true,
          result: {
            folder: {
              path: '/alice/docs',
              entries: [{ name: 'a.txt', kind: 'file', cid: 'bafkreia', state: 'offloaded', retrievableCopies: 2 }],
            },
          },
        })
      }),
    )
    const t = await startBridge(gateway.url)
    try {
      const expected = { status: 200, body: { success: true, folder: { path: '/docs', entries: [{ name: 'a.txt', state: 'Offloaded' }] } } }
      expect(await states({ url: t.url, body: { folderPath: '/docs' } })).toMatchObject(expected)
      expect(await states({ url: t.url, body: { folderPath: '/docs' } })).toMatchObject(expected)
      expect(await states({ url: t.url, body: { folderPath: '/docs', names: ['a.txt'] } })).toMatchObject(expected)
      expect(seen).toEqual([undefined, '"g1"', '"g1"'])
    } finally {
      await t.close()
      await gateway.close()
    }
  })

  it("answers 502 when the gateway's folder states are broken", async () => {
    const gateway = await startFakeGateway((app) =>
      app.post('/folder-states', (_req, res) => void res.json({ success: true, result: { folder: { entries: 'x' } } })),
    )
    const t = await startBridge(gateway.url)
    try {
      expect(await states({ url: t.url, body: { folderPath: '/docs' } })).toMatchObject({ status: 502, body: { success: false } })
    } finally {
      await t.close()
      await gateway.close()
    }
  })

  it('with Nextcloud, badges the mount points in a folder on no mount from their own records, and nothing else', async () => {
    const t = await startNextcloudSetup()
    try {
      const root = await states({ url: t.url, auth: ncAlice, body: { folderPath: '/' } })
      expect(root.status).toBe(200)
      expectToMatch(FolderStatesResponseSchema, root.body)
      // /Filecoin is alice's gateway folder (/alice, recorded); /Team's folder is not on the gateway: no badge.
      expect(root.body.folder.entries).toEqual([
        { name: 'Filecoin', cid: expect.stringMatching(/^baf/), state: 'Partially offloaded', retrievableCopies: 1 },
      ])
      const documents = await states({ url: t.url, auth: ncAlice, body: { folderPath: '/Documents' } })
      expect(documents.body.folder.entries).toEqual([])
    } finally {
      await t.close()
    }
  })
})
