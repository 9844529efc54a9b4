import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { request } from 'node:http'
import { gzipSync } from 'node:zlib'
import express from 'express'
import { openSql } from '../../server/shared/sql/index.ts'
import { startServer, type RunningServer } from '../../server/shared/http.ts'
import { createNamespace, type Namespace } from '../../server/gateway/namespace.ts'
import { createFolderIndex } from '../../server/gateway/folder-index.ts'
import { createFileInfoRouter } from '../../server/gateway/file-info.ts'
import { gatewayErrorHandler } from '../../server/gateway/errors.ts'
import { directoryDag } from '../../server/gateway/folder-cid.ts'
import { chunksOf, makeStore, silentLogger, type TestStore } from './content/helpers.ts'
import type { RecordCache } from '../../server/gateway/record-cache.ts'

let t: TestStore
let server: RunningServer
let ns: Namespace
const files: Record<string, { cid: string; dagSize: number }> = {}

// The namespace and the store here have a database each, so no count of writes covers both: every record is made afresh.
const noRecordsKept: RecordCache = { get: (_key, make) => make() }

beforeAll(async () => {
  t = await makeStore({ groupSize: 300_000 })
  ns = await createNamespace(await openSql({ file: ':memory:', schema: 'gateway' }))
  await ns.makeDir('/docs')
  await ns.makeDir('/docs/sub')
  await ns.makeDir('/empty')
  for (const [path, bytes] of [
    ['/docs/a.txt', Buffer.from('hello\n')],
    ['/docs/sub/big.bin', Buffer.alloc(700_000, 7)],
    ['/top.txt', Buffer.from('top')],
  ] as const) {
    const r = await t.store.ingest(chunksOf(bytes))
    files[path] = r
    await ns.putFile(path, r)
  }
  // Seal what is written so some groups have piece CIDs.
  await t.store.sealWritable()
  await t.store.settled()
  const app = express()
  const folders = createFolderIndex({ namespace: ns, content: t.store })
  folders.start()
  // The folders' directory nodes, stored in the background (a record only reads).
  await folders.settled()
  app.use(createFileInfoRouter({ namespace: ns, content: t.store, folders, logger: silentLogger, records: noRecordsKept }))
  app.use(gatewayErrorHandler(silentLogger))
  server = await startServer(app, 0)
})

afterAll(async () => {
  await server?.close()
  await t?.cleanup()
})

interface Reply {
  status: number
  body: any
}

function post(body: string | Buffer, headers: Record<string, string> = { 'content-type': 'application/json' }): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}/file-info`, { method: 'POST', headers }, (res) => {
      const parts: Buffer[] = []
      res.on('data', (c) => parts.push(c))
      res.on('end', () => {
        const text = Buffer.concat(parts).toString()
        try {
          resolve({ status: res.statusCode!, body: JSON.parse(text) })
        } catch {
          reject(new Error(`not JSON (${res.statusCode}): ${text.slice(0, 200)}`))
        }
      })
    })
    req.on('error', reject)
    req.end(body)
  })
}
const postJson = (value: unknown) => post(JSON.stringify(value))

describe('POST /file-info', () => {
  it('answers a file with its CID, directory and name', async () => {
    const r = await postJson({ filePath: '/docs/a.txt' })
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ success: true, result: { file: { cid: files['/docs/a.txt'].cid, path: '/docs', file: 'a.txt' } } })
  })

  it('accepts the lower-case `filepath` spelling', async () => {
    const r = await postJson({ filepath: '/top.txt' })
    expect(r.body.result.file).toEqual({ cid: files['/top.txt'].cid, path: '/', file: 'top.txt' })
  })

  it('adds details with verbose: state, copies and groups with piece CIDs', async () => {
    const r = await postJson({ filePath: '/docs/sub/big.bin', verbose: true })
    expect(r.status).toBe(200)
    const details = r.body.result.file.details
    expect(details.state).toBe('offloading') // sealed groups, no deals yet
    expect(details.retrievableCopies).toBe(0)
    expect(details.groups.length).toBeGreaterThanOrEqual(1)
    for (const g of details.groups) {
      expect(g.state).toBe('ready_for_deals')
      expect(g.pieceCid.startsWith('baga6ea4seaq')).toBe(true)
      expect(g.retrievableCopies).toBe(0)
      expect(g.deals).toEqual([])
    }
  })

  it('reports a folder with its UnixFS directory CID, the groups below it and the group of its directory nodes', async () => {
    const r = await postJson({ filePath: '/docs/', verbose: true })
    expect(r.status).toBe(200)
    const sub = await directoryDag([{ name: 'big.bin', ...files['/docs/sub/big.bin'] }])
    const docs = await directoryDag([
      { name: 'a.txt', ...files['/docs/a.txt'] },
      { name: 'sub', cid: sub.cid, dagSize: sub.dagSize },
    ])
    expect(r.body.result.file.cid).toBe(docs.cid)
    expect(r.body.result.file.path).toBe('/')
    expect(r.body.result.file.file).toBe('docs')
    const groupsOfA = (await t.store.groupsOf(files['/docs/a.txt'].cid)).map((g) => g.pieceCid)
    const groupsOfBig = (await t.store.groupsOf(files['/docs/sub/big.bin'].cid)).map((g) => g.pieceCid)
    // The folder's own directory nodes are stored by the folder index's background run (not by the read), in a group still open.
    const groupsOfFolder = await t.store.groupsOf(docs.cid)
    expect(groupsOfFolder.length).toBe(1)
    expect(groupsOfFolder[0].state).toBe('writable')
    const reported = r.body.result.file.details.groups.map((g: any) => g.pieceCid ?? g.state).sort()
    expect(reported).toEqual([...new Set([...groupsOfA, ...groupsOfBig])].concat('writable').sort())
    // Where its two files are, one count per state.
    const counts = r.body.result.file.details.fileCounts as Record<string, number>
    expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBe(2)
    expect(Object.keys(counts).every((k) => ['staging', 'offloading', 'partially_offloaded', 'offloaded'].includes(k))).toBe(true)
    // Each group says how many of the folder's files it holds data of (0: only the folder's own nodes),
    // under the gateway's group number, the same number the file's own record shows.
    const byId = new Map<number, any>(r.body.result.file.details.groups.map((g: any) => [g.groupId, g]))
    const holding = async (cid: string) => (await t.store.groupsOf(cid)).map((g) => g.id)
    const [ofBig, ofA] = [await holding(files['/docs/sub/big.bin'].cid), await holding(files['/docs/a.txt'].cid)]
    for (const id of ofBig) expect(byId.get(id).fileCount).toBe(ofA.includes(id) ? 2 : 1)
    expect(byId.get(groupsOfFolder[0].id).fileCount).toBe(ofA.includes(groupsOfFolder[0].id) ? 1 : 0)
    const fileRecord = await postJson({ filePath: '/docs/a.txt', verbose: true })
    expect(fileRecord.body.result.file.details.groups.map((g: any) => g.groupId)).toEqual(ofA)
    expect(fileRecord.body.result.file.details.groups.every((g: any) => g.fileCount === undefined)).toBe(true)
  })

  it('reports an empty folder as staging, in the group that holds its one directory node', async () => {
    const r = await postJson({ filePath: '/empty', verbose: true })
    expect(r.body.result.file.cid).toBe('bafybeiczsscdsbs7ffqz55asqdf3smv6klcw3gofszvwlyarci47bgf354')
    expect(r.body.result.file.details).toMatchObject({
      state: 'staging',
      retrievableCopies: 0,
      groups: [{ state: 'writable', retrievableCopies: 0 }],
    })
  })

  it('normalises doubled slashes and dot segments', async () => {
    const r = await postJson({ filePath: '//docs/./a.txt' })
    expect(r.body.result.file.cid).toBe(files['/docs/a.txt'].cid)
  })

  it('answers 404 in the envelope for a missing file', async () => {
    const r = await postJson({ filePath: '/docs/nope.txt' })
    expect(r.status).toBe(404)
    expect(r.body).toEqual({ success: false, error: 'File or folder not found' })
  })

  it.each([
    ['missing filePath', {}],
    ['wrong type', { filePath: 42 }],
    ['verbose not boolean', { filePath: '/top.txt', verbose: 'yes' }],
    ['unknown field', { filePath: '/top.txt', extra: 1 }],
    ['relative path', { filePath: 'top.txt' }],
    ['traversal', { filePath: '/docs/../top.txt' }],
    ['traversal at the start', { filePath: '/../etc/passwd' }],
    ['NUL byte', { filePath: '/top.txt\u0000.png' }],
    ['backslash', { filePath: '/docs\\a.txt' }],
    ['empty path', { filePath: '' }],
    ['conflicting spellings', { filePath: '/top.txt', filepath: '/docs/a.txt' }],
    ['array body', ['/top.txt']],
    ['overlong path', { filePath: '/' + 'a'.repeat(5000) }],
  ])('refuses %s with 400 in the envelope', async (_name, body) => {
    const r = await postJson(body)
    expect(r.status).toBe(400)
    expect(r.body.success).toBe(false)
    expect(typeof r.body.error).toBe('string')
  })

  it('refuses bad JSON and a JSON null with 400', async () => {
    for (const body of ['{"filePath": ', 'null', '"x"']) {
      const r = await post(body)
      expect(r.status).toBe(400)
      expect(r.body.success).toBe(false)
    }
  })

  it('refuses an empty body with 400', async () => {
    const r = await post('')
    expect(r.status).toBe(400)
    expect(r.body.success).toBe(false)
  })

  it('refuses a body over 1 MiB with 413 in the envelope', async () => {
    const r = await post(JSON.stringify({ filePath: '/x', pad: 'a'.repeat(1_100_000) }))
    expect(r.status).toBe(413)
    expect(r.body.success).toBe(false)
  })

  it('refuses unsupported encodings and charsets with 415 in the envelope', async () => {
    const br = await post('{}', { 'content-type': 'application/json', 'content-encoding': 'x-unheard-of' })
    expect(br.status).toBe(415)
    expect(br.body.success).toBe(false)
    const latin = await post('{}', { 'content-type': 'application/json; charset=klingon' })
    expect(latin.status).toBe(415)
    expect(latin.body.success).toBe(false)
  })

  it('accepts a gzip-encoded body', async () => {
    const r = await post(gzipSync(JSON.stringify({ filePath: '/top.txt' })), {
      'content-type': 'application/json',
      'content-encoding': 'gzip',
    })
    expect(r.status).toBe(200)
    expect(r.body.result.file.cid).toBe(files['/top.txt'].cid)
  })

  it('reads a body without a JSON content type as JSON', async () => {
    const r = await post(JSON.stringify({ filePath: '/top.txt' }), { 'content-type': 'text/plain' })
    expect(r.status).toBe(200)
  })
})
