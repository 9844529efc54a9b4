/**
 * `POST /folder-states` on a whole gateway: each entry of a folder says what
 * its own record says (state, CID, copies), a group waiting on a person
 * marks the entries it holds as needing attention, the answer matches its
 * contract, one listing costs a fixed number of group lookups whatever its
 * size, and bad input gets the gateway's envelope.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createGateway, type Gateway } from '../../server/gateway/index.ts'
import { startServer, type RunningServer } from '../../server/shared/http.ts'
import { GatewayFolderStatesResponseSchema } from '../../server/shared/contracts/folder-states.ts'
import { expectToMatch } from '../helpers/contracts.ts'

const logger = pino({ level: 'silent' })
let dir: string
let gateway: Gateway
let server: RunningServer

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'folder-states-'))
  // No deal service: a sealed group waits for one, which a person must set up.
  gateway = await createGateway(
    { host: '127.0.0.1', port: 0, dataDir: dir, groupSize: 64 << 20, groupIdleSeconds: 3600 },
    { logger, folderSettleMs: 3_600_000 },
  )
  server = await startServer(gateway.app, 0)
  for (const folder of ['/docs', '/docs/sub', '/docs/empty']) await dav('MKCOL', folder)
  await dav('PUT', '/docs/a.txt', 'first file\n')
  await dav('PUT', '/docs/sub/b.txt', 'second file\n')
})
afterAll(async () => {
  await server?.close(100)
  await gateway?.close()
  rmSync(dir, { recursive: true, force: true })
})

async function dav(method: string, path: string, body?: string) {
  const res = await fetch(server.url + path, { method, body })
  expect(res.status).toBe(201)
}

const post = async (body: unknown, raw?: string) => {
  const res = await fetch(server.url + '/folder-states', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: raw ?? JSON.stringify(body),
  })
  return { status: res.status, body: await res.json() }
}

async function recordOf(path: string) {
  const res = await fetch(server.url + '/file-info', { method: 'POST', body: JSON.stringify({ filePath: path, verbose: true }) })
  const { file } = (await res.json()).result
  return { cid: file.cid, state: file.details.state, retrievableCopies: file.details.retrievableCopies }
}

/** Each entry as the listing says it, beside what its own record says. */
async function expectEntriesAsRecords(folder: string) {
  const { status, body } = await post({ folderPath: folder })
  expect(status).toBe(200)
  expectToMatch(GatewayFolderStatesResponseSchema, body)
  for (const e of body.result.folder.entries) {
    const own = await recordOf(`${folder === '/' ? '' : folder}/${e.name}`)
    expect({ name: e.name, cid: e.cid, state: e.state, retrievableCopies: e.retrievableCopies }).toEqual({ name: e.name, ...own })
  }
  return body.result.folder
}

describe('POST /folder-states', () => {
  it('lists every entry of a folder with the state, CID and copies of its own record', async () => {
    const folder = await expectEntriesAsRecords('/docs')
    expect(folder.path).toBe('/docs')
    expect(folder.entries.map((e: { name: string; kind: string }) => [e.name, e.kind])).toEqual([
      ['a.txt', 'file'],
      ['empty', 'dir'],
      ['sub', 'dir'],
    ])
    expect(folder.entries.every((e: { state: string }) => e.state === 'staging')).toBe(true)
    expect(folder.entries.some((e: { attention?: unknown }) => e.attention)).toBe(false)
  })

  it('follows the groups as they are sealed, and marks what waits on a person as needing attention', async () => {
    await gateway.content.sealWritable()
    await gateway.content.settled()
    const folder = await expectEntriesAsRecords('/docs')
    const a = folder.entries.find((e: { name: string }) => e.name === 'a.txt')
    expect(a.state).toBe('offloading')
    expect(a.attention).toEqual({ code: 'NO_DEAL_SERVICE', reason: expect.stringMatching(/no deal service/) })
    // A folder needs attention when something below it does.
    expect(folder.entries.find((e: { name: string }) => e.name === 'sub').attention?.code).toBe('NO_DEAL_SERVICE')
    await expectEntriesAsRecords('/')
  })

  it('costs two group queries for a listing of 1 file or 301, none per file', async () => {
    const lookups = async (folder: string) => {
      type Lookup = 'groupsWithIds' | 'groupIdsOfMany' | 'groupsOf'
      const counted: Record<Lookup, number> = { groupsWithIds: 0, groupIdsOfMany: 0, groupsOf: 0 }
      const content = gateway.content as unknown as Record<Lookup, (...a: unknown[]) => unknown>
      const originals = { groupsWithIds: content.groupsWithIds, groupIdsOfMany: content.groupIdsOfMany, groupsOf: content.groupsOf }
      for (const k of Object.keys(counted) as Lookup[]) {
        content[k] = (...a: unknown[]) => {
          counted[k]++
          return originals[k].apply(gateway.content, a)
        }
      }
      try {
        // A fresh listing each time: a kept answer would cost nothing.
        await dav('PUT', `${folder}/touch-${Math.random().toString(36).slice(2)}.txt`, 'x')
        expect((await post({ folderPath: folder })).status).toBe(200)
      } finally {
        Object.assign(content, originals)
      }
      return counted
    }
    await dav('MKCOL', '/many')
    for (let i = 0; i < 300; i++) await dav('PUT', `/many/f${i}.txt`, `file ${i}`)
    // One query for the files' groups, one for the groups themselves: none per file.
    expect(await lookups('/many')).toEqual({ groupsWithIds: 1, groupIdsOfMany: 1, groupsOf: 0 })
    expect(await lookups('/docs/sub')).toEqual({ groupsWithIds: 1, groupIdsOfMany: 1, groupsOf: 0 })
  })

  it('gives its answer an ETag, and 304 with no body to a request naming it until something is written', async () => {
    const ask = (etag?: string) =>
      fetch(server.url + '/folder-states', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(etag ? { 'if-none-match': etag } : {}) },
        body: JSON.stringify({ folderPath: '/docs' }),
      })
    const first = await ask()
    const etag = first.headers.get('etag')!
    expect(first.status).toBe(200)
    const again = await ask(`"other", W/${etag}`)
    expect({ status: again.status, body: await again.text() }).toEqual({ status: 304, body: '' })
    await dav('PUT', '/docs/etag-change.txt', 'changed')
    const changed = await ask(etag)
    expect(changed.status).toBe(200)
    expect(changed.headers.get('etag')).not.toBe(etag)
    expect((await changed.json()).result.folder.entries.map((e: { name: string }) => e.name)).toContain('etag-change.txt')
  })

  it("answers 404 for a missing folder and 400 for a file, in the gateway's envelope", async () => {
    expect(await post({ folderPath: '/nowhere' })).toEqual({ status: 404, body: { success: false, error: 'Folder not found' } })
    expect(await post({ folderPath: '/docs/a.txt' })).toEqual({
      status: 400,
      body: { success: false, error: 'folderPath names a file, not a folder' },
    })
  })

  it.each([
    ['no folderPath', {}],
    ['a number', { folderPath: 7 }],
    ['an empty path', { folderPath: '' }],
    ['a relative path', { folderPath: 'docs' }],
    ['a ".." segment', { folderPath: '/docs/../../etc' }],
    ['a NUL', { folderPath: '/docs\0' }],
    ['a backslash', { folderPath: '/docs\\..\\x' }],
    ['an unknown field', { folderPath: '/docs', verbose: true }],
    ['a path over 4096 characters', { folderPath: '/' + 'a'.repeat(5000) }],
  ])('refuses %s with 400', async (_what, body) => {
    const res = await post(body)
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ success: false, error: expect.any(String) })
  })

  it('refuses a body that is not JSON with 400 and one over 64 KiB with 413', async () => {
    expect((await post(undefined, '{"folderPath":')).status).toBe(400)
    const huge = await post(undefined, JSON.stringify({ folderPath: '/docs', pad: 'x'.repeat(70_000) }))
    expect(huge).toEqual({ status: 413, body: { success: false, error: expect.any(String) } })
  })
})
