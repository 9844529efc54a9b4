import * as dagPb from '@ipld/dag-pb'
import { CID } from 'multiformats/cid'
import * as raw from 'multiformats/codecs/raw'
import type { BlockFiles } from './block-files.ts'
import type { GroupLifecycle } from './group-lifecycle.ts'
import type { BlockLocation, Repository, StoredBlock } from './repository.ts'
import type { IngestOptions, IngestResult } from './types.ts'
import { buildFileDag, type DagProfile } from './unixfs-dag.ts'

interface PendingBlock extends BlockLocation {
  /** Settles when the bytes are on disk (not yet fsynced). */
  written: Promise<void>
}

export interface IngestDeps {
  repo: Repository
  files: BlockFiles
  lifecycle: GroupLifecycle
  /** Blocks written by ingests that have not committed yet, shared so concurrent ingests dedupe too. */
  pending: Map<string, PendingBlock>
  profile?: DagProfile
}

/**
 * Writes blocks into the writable group for one ingest (or one folder's
 * directory nodes): each new block at an offset reserved in the current
 * group, deduplicated against stored blocks and against blocks other
 * ingests are writing right now. `commit` waits for the bytes, fsyncs the
 * touched groups and records everything in one transaction; `finish` always
 * runs after, whatever happened, so no group seals under a write in flight.
 */
function createBlockWriter(deps: IngestDeps) {
  const { repo, files, lifecycle, pending } = deps
  const located = new Map<string, BlockLocation>()
  const touched = new Set<number>()
  const owned: string[] = []
  const writes: Promise<void>[] = []

  const touch = (groupId: number) => {
    if (touched.has(groupId)) return
    touched.add(groupId)
    lifecycle.retain(groupId)
  }

  return {
    located,
    async put(cid: CID, bytes: Uint8Array): Promise<CID> {
      const key = cid.toString()
      if (located.has(key)) return cid
      const stored = repo.block(key)
      if (stored) {
        located.set(key, stored)
        return cid
      }
      let p = pending.get(key)
      if (!p) {
        const r = lifecycle.reserve(bytes.length)
        touch(r.groupId)
        const written = files.write(r.groupId, r.offset, bytes)
        // Awaited below and in `finish`; never an unhandled rejection.
        written.catch(() => {})
        p = { groupId: r.groupId, offset: r.offset, length: bytes.length, written }
        pending.set(key, p)
        owned.push(key)
      } else {
        // Another ingest is writing this block: its group must not seal before we commit.
        touch(p.groupId)
      }
      writes.push(p.written)
      located.set(key, { groupId: p.groupId, offset: p.offset, length: p.length })
      await p.written
      return cid
    },
    async commit(content: { cid: string; size: number; dagSize: number; leaves: { cid: string; length: number }[] }): Promise<void> {
      await Promise.all(writes)
      await Promise.all([...touched].map((g) => files.sync(g)))
      const blocks: StoredBlock[] = [...located].map(([cid, loc]) => ({ cid, ...loc }))
      repo.commitContent({ ...content, blocks })
    },
    async finish(): Promise<void> {
      await Promise.allSettled(writes)
      for (const key of owned) pending.delete(key)
      for (const g of touched) lifecycle.release(g)
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
    const dag = await buildFileDag(counted(), blockstore, deps.profile)
    signal?.throwIfAborted()
    await writer.commit({ cid: dag.cid, size, dagSize: dag.dagSize, leaves: orderedLeaves(dag.cid, nodes, writer.located) })
    return { cid: dag.cid, size, dagSize: dag.dagSize }
  } finally {
    await writer.finish()
  }
}

/**
 * Stores a folder's directory nodes (and HAMT shards) as blocks, like a
 * file's, so the folder's CID can be fetched from the network once its
 * groups are offloaded. A folder already stored under this CID is left alone.
 */
export async function storeDirectory(deps: IngestDeps, root: { cid: string; dagSize: number }, nodes: Iterable<{ cid: string; bytes: Uint8Array }>): Promise<void> {
  if (deps.repo.content(root.cid)) return
  const writer = createBlockWriter(deps)
  try {
    for (const node of nodes) await writer.put(CID.parse(node.cid), node.bytes)
    // A folder has no bytes of its own to read: size 0, no leaves.
    await writer.commit({ cid: root.cid, size: 0, dagSize: root.dagSize, leaves: [] })
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
