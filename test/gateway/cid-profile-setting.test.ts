/**
 * CID_PROFILE changes how new files and folders get their CIDs, never the
 * CID of anything already stored: each file and folder keeps the profile it
 * was made with, across a restart on the other setting.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { afterAll, describe, expect, it } from 'vitest'
import { createGateway } from '../../server/gateway/index.ts'
import type { CidProfile } from '../../server/shared/cid-profile.ts'
import { startServer } from '../../server/shared/http.ts'
import { buildFileDag } from '../../server/gateway/content/unixfs-dag.ts'
import { chunksOf } from './content/helpers.ts'
import { directoryDag } from '../../server/gateway/folder-cid.ts'
import * as dagPb from '@ipld/dag-pb'
import { UnixFS } from 'ipfs-unixfs'

const logger = pino({ level: 'silent' })
const dataDir = mkdtempSync(join(tmpdir(), 'cid-profile-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

async function withGateway<T>(cidProfile: CidProfile, run: (at: (path: string) => string) => Promise<T>): Promise<T> {
  const gateway = await createGateway(
    { host: '127.0.0.1', port: 0, dataDir, groupSize: 8 << 20, groupIdleSeconds: 3600, cidProfile },
    { logger },
  )
  const server = await startServer(gateway.app, 0)
  try {
    return await run((path) => `${server.url}${path}`)
  } finally {
    await server.close(100)
    await gateway.close()
  }
}

const cidOf = async (at: (path: string) => string, filePath: string) => {
  const res = await fetch(at('/file-info'), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ filePath }),
  })
  return ((await res.json()) as { result: { file: { cid: string } } }).result.file.cid
}

const discard = { put: async <T>(cid: T) => cid }
/** The raw CIDv1 of "x" (the one-byte file every name below holds). */
const RAW_X = 'bafkreibnoelefnzgwbcacyt4vh52ymxvzbjq7mmqhtcnwarfq4lzegsiqe'
// Past one 256 KiB chunk and under one 1 MiB chunk: the two profiles cut it differently.
const bytes = Buffer.alloc(600_000, 7)
// 2 250 links of 76-byte names and 36-byte CIDs: 252 000 bytes of names and CIDs (under 256 KiB, kubo-cid-v1
// keeps it flat), about 270 000 bytes as a serialized node (over it, unixfs-v1-2025 shards it).
const names = Array.from(
  { length: 2_250 },
  (_, i) => `${String(i).padStart(5, '0')}-a-rather-long-file-name-that-fills-the-directory-node-quickly-also.txt`,
)

describe('CID_PROFILE', () => {
  it("gives new files the profile set now, and keeps every stored file's and folder's CID when the setting changes", async () => {
    const legacy = (await buildFileDag(chunksOf(bytes), discard, 'kubo-cid-v1')).cid
    const current = (await buildFileDag(chunksOf(bytes), discard, 'unixfs-v1-2025')).cid
    expect(legacy).not.toBe(current)

    const before = await withGateway('kubo-cid-v1', async (at) => {
      expect((await fetch(at('/old'), { method: 'MKCOL' })).status).toBe(201)
      expect((await fetch(at('/old/file.bin'), { method: 'PUT', body: bytes })).status).toBe(201)
      expect((await fetch(at('/old/tiny.txt'), { method: 'PUT', body: 'tiny' })).status).toBe(201)
      expect(await cidOf(at, '/old/file.bin')).toBe(legacy)
      return { folder: await cidOf(at, '/old') }
    })

    await withGateway('unixfs-v1-2025', async (at) => {
      // What was stored keeps its CID: the file's, and the folder's (made by its own rule).
      expect(await cidOf(at, '/old/file.bin')).toBe(legacy)
      expect(await cidOf(at, '/old')).toBe(before.folder)
      // New content gets the new profile, even in an old folder.
      expect((await fetch(at('/old/again.bin'), { method: 'PUT', body: bytes })).status).toBe(201)
      expect(await cidOf(at, '/old/again.bin')).toBe(current)
      // A copy of a file is the same content: the same CID.
      expect((await fetch(at('/old/file.bin'), { method: 'COPY', headers: { destination: at('/old/copy.bin') } })).status).toBe(201)
      expect(await cidOf(at, '/old/copy.bin')).toBe(legacy)
    })
  })

  it("shards each folder by its own profile's rule: links-bytes under kubo-cid-v1, the node's serialized size under unixfs-v1-2025", async () => {
    const folders: Record<CidProfile, string> = { 'kubo-cid-v1': '', 'unixfs-v1-2025': '' }
    for (const profile of ['kubo-cid-v1', 'unixfs-v1-2025'] as const) {
      await withGateway(profile, async (at) => {
        const dir = `/big-${profile}`
        expect((await fetch(at(dir), { method: 'MKCOL' })).status).toBe(201)
        for (let i = 0; i < names.length; i += 50) {
          await Promise.all(
            names
              .slice(i, i + 50)
              .map(async (n) => expect((await fetch(at(`${dir}/${n}`), { method: 'PUT', body: 'x' })).status).toBe(201)),
          )
        }
        folders[profile] = await cidOf(at, dir)
      })
    }
    expect(names.every((n) => n.length === 76)).toBe(true)
    // The same names and contents, two folder CIDs: one profile shards this folder, the other does not.
    expect(folders['kubo-cid-v1']).not.toBe(folders['unixfs-v1-2025'])
    const flat = await directoryDag(
      names.map((name) => ({ name, cid: RAW_X, dagSize: 1 })),
      { profile: 'kubo-cid-v1' },
    )
    const sharded = await directoryDag(
      names.map((name) => ({ name, cid: RAW_X, dagSize: 1 })),
      { profile: 'unixfs-v1-2025' },
    )
    expect([folders['kubo-cid-v1'], folders['unixfs-v1-2025']]).toEqual([flat.cid, sharded.cid])
    expect(UnixFS.unmarshal(dagPb.decode(flat.bytes).Data!).type).toBe('directory')
    expect(UnixFS.unmarshal(dagPb.decode(sharded.bytes).Data!).type).toBe('hamt-sharded-directory')
  })
})
