import { importFile, type ImporterOptions, type WritableStorage } from 'ipfs-unixfs-importer'
import { balanced } from 'ipfs-unixfs-importer/layout'

/**
 * DAG shapes we can build. `kubo-cid-v1` is what the gateway stores: the DAG
 * kubo builds for `ipfs add --cid-version=1` (256 KiB fixed chunks, raw
 * leaves, balanced layout with 174 links per node, a one-chunk file is the raw
 * leaf itself). `unixfs-v0-2015` is kubo's legacy default, kept so tests can
 * check the layout against kubo's published CIDv0 vectors.
 */
export type DagProfile = 'kubo-cid-v1' | 'unixfs-v0-2015'

export const CHUNK_SIZE = 262_144
export const MAX_LINKS = 174

// The importer's own defaults differ from kubo's --cid-version=1 (e.g. its
// unixfs-v1-2025 profile uses 1 MiB chunks and 1024 links), so spell them out.
const PROFILES: Record<DagProfile, ImporterOptions> = {
  'kubo-cid-v1': { cidVersion: 1, rawLeaves: true, reduceSingleLeafToSelf: true },
  'unixfs-v0-2015': { cidVersion: 0, rawLeaves: false, leafType: 'file', reduceSingleLeafToSelf: true },
}

export interface FileDag {
  cid: string
  /** Cumulative size of the DAG's blocks (Tsize). */
  dagSize: number
}

/** Chunks `content` into a UnixFS file DAG, handing each block to `blocks.put` as it is made. */
export async function buildFileDag(
  content: AsyncIterable<Uint8Array>,
  blocks: WritableStorage,
  profile: DagProfile = 'kubo-cid-v1',
): Promise<FileDag> {
  const result = await importFile({ content }, blocks, {
    ...PROFILES[profile],
    chunker: fixedSizeLeaves,
    layout: balanced({ maxChildrenPerNode: MAX_LINKS }),
    // Blocks hash in parallel; writes are positional, so order does not matter.
    blockWriteConcurrency: 8,
  })
  return { cid: result.cid.toString(), dagSize: Number(result.size) }
}

/**
 * Cuts the content into CHUNK_SIZE leaves, the last one shorter and an empty
 * file one empty leaf, as the importer's own fixedSize chunker does. Each
 * leaf is one copy into a buffer of its own, not a list of the pieces that
 * arrived joined on demand, which costs an upload a copy and its garbage.
 */
export async function* fixedSizeLeaves(source: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  // Not zero-filled: every byte of a leaf handed on was written first.
  let leaf = Buffer.allocUnsafeSlow(CHUNK_SIZE)
  let filled = 0
  let emitted = false
  for await (const bytes of source) {
    for (let at = 0; at < bytes.length; ) {
      const n = Math.min(CHUNK_SIZE - filled, bytes.length - at)
      leaf.set(bytes.subarray(at, at + n), filled)
      filled += n
      at += n
      if (filled === CHUNK_SIZE) {
        yield leaf
        emitted = true
        leaf = Buffer.allocUnsafeSlow(CHUNK_SIZE)
        filled = 0
      }
    }
  }
  if (filled > 0 || !emitted) yield leaf.subarray(0, filled)
}
