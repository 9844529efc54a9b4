import { afterEach, describe, expect, it } from 'vitest'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createBlockFiles, type BlockFiles } from '../../../server/gateway/content/block-files.ts'
import { createGroupLifecycle } from '../../../server/gateway/content/group-lifecycle.ts'
import { ingestFile, SYNC_AHEAD_BYTES, WRITE_AHEAD_BYTES } from '../../../server/gateway/content/ingest.ts'
import { createRepository } from '../../../server/gateway/content/repository.ts'
import { migrateContent } from '../../../server/gateway/content/schema.ts'
import { buildFileDag, fixedSizeLeaves, MAX_CHUNK_SIZE } from '../../../server/gateway/content/unixfs-dag.ts'
import { fixedSize } from 'ipfs-unixfs-importer/chunker'
import { openSql, type Sql } from '../../../server/shared/sql/index.ts'
import { chunksOf, silentLogger } from './helpers.ts'

/**
 * One ingest against real block files and a real SQLite store, with the block
 * files' writes or fsyncs held or failed through a thin wrapper, to show what
 * an upload does while the disk lags or fails.
 */
let cleanup: (() => Promise<void>) | undefined
afterEach(async () => {
  await cleanup?.()
  cleanup = undefined
})

async function ingestSetup(wrap: (files: BlockFiles) => BlockFiles) {
  const dir = mkdtempSync(join(tmpdir(), 'ingest-'))
  const sql: Sql = await openSql({ file: join(dir, 'gateway.sqlite'), schema: 'gateway' })
  await migrateContent(sql)
  const repo = createRepository(sql)
  const real = createBlockFiles(join(dir, 'groups'))
  const files = wrap(real)
  const lifecycle = createGroupLifecycle({
    repo,
    files,
    groupSize: 1 << 30,
    groupIdleMs: 60_000,
    listingWaitMs: 60_000,
    logger: silentLogger,
  })
  await lifecycle.resume()
  cleanup = async () => {
    await lifecycle.close()
    await real.close()
    await sql.close()
    rmSync(dir, { recursive: true, force: true })
  }
  return { repo, ingest: (source: AsyncIterable<Uint8Array>) => ingestFile({ repo, files, lifecycle, pending: new Map() }, source) }
}

/** The bytes, 1 MiB at a time, counting how many were taken; `before` is awaited before each chunk. */
function counting(bytes: Buffer, before?: () => Promise<void>) {
  const source = { taken: 0, done: false, chunks: undefined as unknown as AsyncIterable<Uint8Array> }
  source.chunks = (async function* () {
    for (let at = 0; at < bytes.length; at += 1 << 20) {
      await before?.()
      const chunk = bytes.subarray(at, at + (1 << 20))
      source.taken += chunk.length
      yield chunk
    }
    source.done = true
  })()
  return source
}

const settle = (ms = 50) => new Promise((r) => setTimeout(r, ms))

describe('ingest and the disk', () => {
  it('takes at most a bounded amount of an upload ahead of a disk that lags, and finishes once the disk catches up', async () => {
    let release!: () => void
    const diskBack = new Promise<void>((r) => (release = r))
    const { ingest } = await ingestSetup((files) => ({ ...files, write: async (...args) => (await diskBack, files.write(...args)) }))
    const bytes = randomBytes(64 << 20)
    const source = counting(bytes)
    const running = ingest(source.chunks)
    for (let i = 0; i < 20; i++) await settle()
    // Taken, not yet written: the write-ahead, plus the importer's batch and the chunk being cut.
    expect(source.taken).toBeGreaterThan(0)
    expect(source.taken).toBeLessThanOrEqual(WRITE_AHEAD_BYTES + 8 * MAX_CHUNK_SIZE + (2 << 20))
    release()
    const stored = await running
    expect(stored.size).toBe(bytes.length)
  })

  it('fsyncs what an upload wrote while the upload goes on, so the commit waits only for the tail', async () => {
    let syncsBeforeTheEnd = 0
    // The upload comes no faster than the disk takes it, as from a network: an in-memory source on a loaded
    // machine could otherwise be read whole while the first fsync still runs, and no second one would start.
    let busy = 0
    const tracked = <T>(work: Promise<T>) => {
      busy++
      return work.finally(() => busy--)
    }
    const source = counting(randomBytes(4 * SYNC_AHEAD_BYTES), async () => {
      do await settle(10)
      while (busy > 0)
    })
    const { ingest } = await ingestSetup((files) => ({
      ...files,
      write: (...args) => tracked(files.write(...args)),
      sync: (id) => {
        if (!source.done) syncsBeforeTheEnd++
        return tracked(files.sync(id))
      },
    }))
    await ingest(source.chunks)
    expect(syncsBeforeTheEnd).toBeGreaterThanOrEqual(2)
  })

  it('fails the upload, recording nothing, when an fsync made during it fails, even if the last one succeeds', async () => {
    // Linux reports a failed writeback to one fsync only: the commit must not trust a later one.
    let syncs = 0
    const { repo, ingest } = await ingestSetup((files) => ({
      ...files,
      sync: async (id) => {
        if (syncs++ === 0) throw Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' })
        return files.sync(id)
      },
    }))
    const bytes = randomBytes(2 * SYNC_AHEAD_BYTES)
    await expect(ingest(counting(bytes).chunks)).rejects.toThrow('EIO')
    expect(syncs).toBeGreaterThan(1)
    const { cid } = await buildFileDag(chunksOf(bytes), { put: async (c) => c })
    expect(await repo.content(cid)).toBeUndefined()
  })
})

describe('cutting leaves', () => {
  it("cuts the same leaves as the importer's own fixed-size chunker, however the bytes arrive", async () => {
    const cutBy = async (chunker: (s: AsyncIterable<Uint8Array>) => AsyncIterable<Uint8Array>, source: AsyncIterable<Uint8Array>) => {
      const leaves: Buffer[] = []
      for await (const leaf of chunker(source)) leaves.push(Buffer.from(leaf))
      return leaves
    }
    for (const chunkSize of [262_144, 1_048_576]) {
      const theirs = fixedSize({ chunkSize })
      for (const size of [0, 1, chunkSize - 1, chunkSize, chunkSize + 1, 3 * chunkSize + 12_345]) {
        const bytes = randomBytes(size)
        for (const piece of [1000, 65_536, chunkSize, 700_000]) {
          const ours = await cutBy((s) => fixedSizeLeaves(s, chunkSize), chunksOf(bytes, piece))
          const expected = await cutBy(theirs, chunksOf(bytes, piece))
          expect(ours.map((l) => l.length)).toEqual(expected.map((l) => l.length))
          expect(ours.every((leaf, i) => leaf.equals(expected[i]))).toBe(true)
        }
      }
    }
    // Empty pieces in the stream change nothing.
    const withEmpties = async function* () {
      yield new Uint8Array(0)
      yield randomBytes(10)
      yield new Uint8Array(0)
    }
    expect((await cutBy((s) => fixedSizeLeaves(s, 262_144), withEmpties())).map((l) => l.length)).toEqual([10])
  })
})
