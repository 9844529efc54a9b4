import { importFile, type ImporterOptions, type WritableStorage } from 'ipfs-unixfs-importer'
import { balanced } from 'ipfs-unixfs-importer/layout'
import { DEFAULT_CID_PROFILE, type CidProfile } from '../../shared/cid-profile.ts'

/**
 * How files and folders become UnixFS DAGs, by IPIP-499 profile name.
 *
 * - `unixfs-v1-2025` (IPIP-499, the default): CIDv1, raw leaves, 1 MiB fixed
 *   chunks, 1 024 links per node, a folder sharded (HAMT) once its node
 *   would serialize to more than 256 KiB. Kubo 0.40+, filecoin-pin and
 *   Pinata give files these CIDs.
 * - `kubo-cid-v1`: what this gateway stored before, and what
 *   `ipfs add --cid-version=1` gave before IPIP-499: CIDv1, raw leaves,
 *   256 KiB chunks, 174 links, sharding once the links' names and CIDs sum
 *   to 256 KiB.
 * - `unixfs-v0-2015` (IPIP-499's legacy profile, CIDv0): only to check the
 *   layout against Kubo's published CIDv0 vectors.
 *
 * A one-chunk file is its raw leaf itself under the CIDv1 profiles.
 */
export type DagProfile = CidProfile | 'unixfs-v0-2015'

export interface DagLayout {
  chunkSize: number
  maxLinks: number
  cidVersion: 0 | 1
  /** How a folder's size is judged against the sharding threshold (the importer's `shardSplitStrategy` names). */
  shardSizing: 'links-bytes' | 'block-bytes'
  /** Sharded at exactly the threshold (`>=`, Kubo up to 0.39) or only past it (`>`, boxo 0.37+ and IPIP-499). */
  shardsAtThreshold: boolean
  importer: ImporterOptions
}

export const LAYOUTS: Record<DagProfile, DagLayout> = {
  'unixfs-v1-2025': {
    chunkSize: 1_048_576,
    maxLinks: 1_024,
    cidVersion: 1,
    shardSizing: 'block-bytes',
    shardsAtThreshold: false,
    importer: { cidVersion: 1, rawLeaves: true, reduceSingleLeafToSelf: true },
  },
  'kubo-cid-v1': {
    chunkSize: 262_144,
    maxLinks: 174,
    cidVersion: 1,
    shardSizing: 'links-bytes',
    shardsAtThreshold: true,
    importer: { cidVersion: 1, rawLeaves: true, reduceSingleLeafToSelf: true },
  },
  'unixfs-v0-2015': {
    chunkSize: 262_144,
    maxLinks: 174,
    cidVersion: 0,
    shardSizing: 'links-bytes',
    shardsAtThreshold: false,
    importer: { cidVersion: 0, rawLeaves: false, leafType: 'file', reduceSingleLeafToSelf: true },
  },
}

/** The largest leaf any profile cuts. */
export const MAX_CHUNK_SIZE = Math.max(...Object.values(LAYOUTS).map((l) => l.chunkSize))
/**
 * Leaves hashed at once, by their bytes: 32 of kubo's 256 KiB, 8 of IPIP-499's 1 MiB.
 * The importer reads no more of the upload until a whole batch is written, so a
 * small batch left the socket waiting (2 MiB: 143–165 MB/s, 8 MiB: 181 MB/s median, `npm run bench -- --only ingest`).
 */
export const HASHING_AHEAD_BYTES = 8 * 1_048_576

export interface FileDag {
  cid: string
  /** Cumulative size of the DAG's blocks (Tsize). */
  dagSize: number
}

/** Chunks `content` into a UnixFS file DAG, handing each block to `blocks.put` as it is made. */
export async function buildFileDag(
  content: AsyncIterable<Uint8Array>,
  blocks: WritableStorage,
  profile: DagProfile = DEFAULT_CID_PROFILE,
): Promise<FileDag> {
  const layout = LAYOUTS[profile]
  const result = await importFile({ content }, blocks, {
    ...layout.importer,
    chunker: (source) => fixedSizeLeaves(source, layout.chunkSize),
    layout: balanced({ maxChildrenPerNode: layout.maxLinks }),
    // Blocks hash in parallel (writes are positional, so order does not matter).
    blockWriteConcurrency: Math.max(2, HASHING_AHEAD_BYTES / layout.chunkSize),
  })
  return { cid: result.cid.toString(), dagSize: Number(result.size) }
}

/**
 * Cuts the content into `chunkSize` leaves, the last one shorter and an empty
 * file one empty leaf, as the importer's own fixedSize chunker does. Each
 * leaf is one copy into a buffer of its own, not a list of the pieces that
 * arrived joined on demand, which costs an upload a copy and its garbage.
 */
export async function* fixedSizeLeaves(source: AsyncIterable<Uint8Array>, chunkSize: number): AsyncGenerator<Uint8Array> {
  // Not zero-filled: every byte of a leaf handed on was written first.
  let leaf = Buffer.allocUnsafeSlow(chunkSize)
  let filled = 0
  let emitted = false
  for await (const bytes of source) {
    for (let at = 0; at < bytes.length;) {
      const n = Math.min(chunkSize - filled, bytes.length - at)
      leaf.set(bytes.subarray(at, at + n), filled)
      filled += n
      at += n
      if (filled === chunkSize) {
        yield leaf
        emitted = true
        leaf = Buffer.allocUnsafeSlow(chunkSize)
        filled = 0
      }
    }
  }
  if (filled > 0 || !emitted) yield leaf.subarray(0, filled)
}
