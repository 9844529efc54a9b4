import * as dagPb from '@ipld/dag-pb'
import { CID } from 'multiformats/cid'
import * as raw from 'multiformats/codecs/raw'
import type { BlockFiles } from './block-files.ts'
import type { GroupLifecycle } from './types.ts'
import type { BlockLocation, NewContent, Repository, StoredBlock } from './types.ts'
import type { IngestOptions, IngestResult } from './types.ts'
import { DEFAULT_CID_PROFILE, type CidProfile } from '../../shared/cid-profile.ts'
import { buildFileDag } from './unixfs-dag.ts'
import { createSerial } from '../store.ts'
import type { GroupUse } from './group-use.ts'

interface PendingBlock {
  /** Where the block goes, once reserved. */
  at: Promise<BlockLocation>
  /** Set as soon as `at` resolves. */
  location?: BlockLocation
  /** Settles when the bytes are on disk (not yet fsynced). */
  written: Promise<void>
}

/**
 * New bytes an ingest may have on their way to disk before it waits for them.
 * Without this slack the importer, which hashes a batch of chunks and then
 * waits for the whole batch, waited on every write, and the upload stalled
 * behind the disk; with it, memory stays bounded whatever the upload's size.
 */
export const WRITE_AHEAD_BYTES = 16 << 20
/**
 * Every this many bytes written, an ingest fsyncs what it wrote so far in the
 * background, so that the fsync a commit waits for covers only the tail
 * instead of the whole upload.
 */
export const SYNC_AHEAD_BYTES = 32 << 20

export interface IngestDeps {
  repo: Repository
  files: BlockFiles
  lifecycle: GroupLifecycle
  /** Blocks written by ingests that have not committed yet, shared so concurrent ingests dedupe too. */
  pending: Map<string, PendingBlock>
  /** How new files are imported (DEFAULT_CID_PROFILE without it). */
  cidProfile?: CidProfile
  /** Where an ingest says which groups it uses, so that none of them is retired under it. */
  use?: GroupUse
}

/**
 * Writes blocks into the writable group for one ingest (or one folder's
 * directory nodes): each new block at an offset reserved in the current
 * group, deduplicated against stored blocks and against blocks other
 * ingests are writing right now. Writes run behind the DAG (up to
 * WRITE_AHEAD_BYTES) and are fsynced as they go (every SYNC_AHEAD_BYTES).
 * `commit` waits for every write and every early fsync, fsyncs the touched
 * groups once more and records everything in one transaction; `finish`
 * always runs after, whatever happened, so no group seals under a write in
 * flight.
 */
function createBlockWriter(deps: IngestDeps) {
  const { repo, files, lifecycle, pending } = deps
  const located = new Map<string, BlockLocation>()
  /** Groups this ingest holds open (once per hold; released in `finish`). */
  const held: number[] = []
  const owned: string[] = []
  /** Groups holding this ingest's blocks, told to `deps.use` once each. */
  const used = new Set<number>()
  const uses = (groupId: number) => {
    if (used.has(groupId)) return
    used.add(groupId)
    deps.use?.begin(groupId)
  }
  const writes: Promise<void>[] = []
  /** Writes not yet waited for, oldest first, and their bytes. */
  const ahead: { written: Promise<void>; bytes: number }[] = []
  let aheadBytes = 0
  let unsyncedBytes = 0
  /** Early fsyncs. A failed fsync may not be reported again to the next one (Linux reports it once), so commit awaits these too. */
  const syncs: Promise<void>[] = []
  let syncing: Promise<void> | undefined

  /** Bounds the bytes in flight, and starts a background fsync of everything written so far each SYNC_AHEAD_BYTES. */
  async function pace(written: Promise<void>, bytes: number): Promise<void> {
    ahead.push({ written, bytes })
    aheadBytes += bytes
    unsyncedBytes += bytes
    if (unsyncedBytes >= SYNC_AHEAD_BYTES && !syncing) {
      unsyncedBytes = 0
      const groups = [...new Set(held)]
      const sync = Promise.all(writes)
        .then(() => Promise.all(groups.map((g) => files.sync(g))))
        .then(() => {})
      syncs.push(sync)
      syncing = sync.finally(() => (syncing = undefined))
      syncing.catch(() => {})
    }
    while (aheadBytes > WRITE_AHEAD_BYTES) {
      const oldest = ahead.shift()!
      aheadBytes -= oldest.bytes
      await oldest.written
    }
  }

  /** Where a block goes: stored already, or pending (reserved by this ingest or another one). */
  async function place(key: string, bytes: Uint8Array, lookup: Promise<BlockLocation | undefined>): Promise<BlockLocation | PendingBlock> {
    const stored = await lookup
    if (stored) return stored
    let p = pending.get(key)
    if (!p) {
      // The reservation holds the group for this ingest.
      const at = lifecycle.reserve(bytes.length).then((r) => {
        held.push(r.groupId)
        return (entry.location = { groupId: r.groupId, offset: r.offset, length: bytes.length })
      })
      const entry: PendingBlock = { at, written: at.then((loc) => files.write(loc.groupId, loc.offset, bytes)) }
      // Awaited in `put` and in `finish`; never an unhandled rejection.
      at.catch(() => {})
      entry.written.catch(() => {})
      pending.set(key, entry)
      owned.push(key)
      p = entry
    } else {
      // Another ingest is writing this block: its group must not seal before we commit.
      // Its writer holds the group until then, and cannot let go before `at` has settled.
      const hold = (loc: BlockLocation) => {
        lifecycle.retain(loc.groupId)
        held.push(loc.groupId)
      }
      if (p.location) hold(p.location)
      else p.at.then(hold, () => {})
    }
    writes.push(p.written)
    return p
  }
  // Blocks are placed in the order they come, whatever order the store answers in:
  // the same bytes give the same groups, hence the same CARs and piece CIDs.
  const inTurn = createSerial()

  return {
    located,
    async put(cid: CID, bytes: Uint8Array): Promise<CID> {
      const key = cid.toString()
      if (located.has(key)) return cid
      // Looked up at once (several lookups in flight on PostgreSQL's pool), placed in turn.
      const lookup = repo.block(key)
      lookup.catch(() => {})
      const where = await inTurn(() => place(key, bytes, lookup))
      if (!('at' in where)) {
        uses(where.groupId)
        located.set(key, where)
        return cid
      }
      const at = await where.at
      uses(at.groupId)
      located.set(key, at)
      await pace(where.written, bytes.length)
      return cid
    },
    async commit(content: Omit<NewContent, 'blocks'>): Promise<void> {
      await Promise.all(writes)
      await Promise.all(syncs)
      await Promise.all([...new Set(held)].map((g) => files.sync(g)))
      const blocks: StoredBlock[] = [...located].map(([cid, loc]) => ({ cid, ...loc }))
      await repo.commitContent({ ...content, blocks })
    },
    async finish(): Promise<void> {
      await Promise.allSettled([...writes, ...syncs])
      for (const key of owned) pending.delete(key)
      for (const g of held.splice(0)) lifecycle.release(g)
      deps.use?.end(used)
    },
  }
}

/**
 * One ingest: builds the file's DAG while the bytes stream in, writes each new
 * block at an offset reserved in the writable group, then fsyncs the touched
 * groups and records blocks, content and leaves in one transaction. Until that
 * transaction nothing refers to the new bytes, so a failure leaves only
 * orphan bytes behind.
 */
export async function ingestFile(deps: IngestDeps, source: AsyncIterable<Uint8Array>, options: IngestOptions = {}): Promise<IngestResult> {
  const { signal } = options
  signal?.throwIfAborted()
  const writer = createBlockWriter(deps)
  const nodes = new Map<string, Uint8Array>()
  let size = 0
  const blockstore = {
    put(cid: CID, bytes: Uint8Array): Promise<CID> {
      if (cid.code === dagPb.code) nodes.set(cid.toString(), bytes)
      return writer.put(cid, bytes)
    },
  }

  async function* counted(): AsyncGenerator<Uint8Array> {
    for await (const chunk of abortable(source, signal)) {
      size += chunk.length
      yield chunk
    }
  }

  try {
    const cidProfile = deps.cidProfile ?? DEFAULT_CID_PROFILE
    const dag = await buildFileDag(counted(), blockstore, cidProfile)
    signal?.throwIfAborted()
    await writer.commit({ kind: 'file', cid: dag.cid, size, dagSize: dag.dagSize, leaves: orderedLeaves(dag.cid, nodes, writer.located) })
    return { cid: dag.cid, size, dagSize: dag.dagSize, cidProfile }
  } finally {
    await writer.finish()
  }
}

/**
 * Stores a folder's directory nodes (and HAMT shards) as blocks, like a
 * file's, so the folder's CID can be fetched from the network once its
 * groups are offloaded. A folder already stored under this CID is left
 * alone, unless a group of it was retired: its nodes are stored again.
 */
export async function storeDirectory(
  deps: IngestDeps,
  root: { cid: string; dagSize: number },
  nodes: Iterable<{ cid: string; bytes: Uint8Array }>,
): Promise<void> {
  if (await deps.repo.storedWhole(root.cid)) return
  const writer = createBlockWriter(deps)
  try {
    for (const node of nodes) await writer.put(CID.parse(node.cid), node.bytes)
    // A folder has no bytes of its own to read: size 0, no leaves.
    await writer.commit({ kind: 'directory', cid: root.cid, size: 0, dagSize: root.dagSize, leaves: [] })
  } finally {
    await writer.finish()
  }
}

/** The file's raw leaves in byte order, found by walking the DAG from its root. */
function orderedLeaves(root: string, nodes: Map<string, Uint8Array>, located: Map<string, BlockLocation>) {
  const leaves: { cid: string; length: number }[] = []
  const walk = (key: string) => {
    const cid = CID.parse(key)
    if (cid.code === raw.code) {
      leaves.push({ cid: key, length: located.get(key)!.length })
      return
    }
    const bytes = nodes.get(key)
    if (!bytes) throw new Error(`DAG node ${key} was not produced by this ingest`)
    for (const link of dagPb.decode(bytes).Links) walk(link.Hash.toString())
  }
  walk(root)
  return leaves
}

/**
 * Iterates `source`, rejecting as soon as `signal` aborts even while the source is stalled.
 * One abort listener per pending read, removed when the read settles: racing every read
 * against one long-lived "aborted" promise would keep every chunk reachable from that
 * promise until the upload ends (a whole file in memory).
 */
async function* abortable(source: AsyncIterable<Uint8Array>, signal?: AbortSignal): AsyncGenerator<Uint8Array> {
  if (!signal) {
    yield* source
    return
  }
  const it = source[Symbol.asyncIterator]()
  const nextOrAbort = () =>
    new Promise<IteratorResult<Uint8Array>>((resolve, reject) => {
      const onAbort = () => reject(signal.reason)
      signal.addEventListener('abort', onAbort, { once: true })
      it.next().then(
        (result) => {
          signal.removeEventListener('abort', onAbort)
          resolve(result)
        },
        (err) => {
          signal.removeEventListener('abort', onAbort)
          reject(err)
        },
      )
    })
  try {
    while (true) {
      signal.throwIfAborted()
      const next = await nextOrAbort()
      if (next.done) return
      yield next.value
    }
  } finally {
    void it.return?.()?.catch?.(() => {})
  }
}
