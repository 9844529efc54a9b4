import { createHash } from 'node:crypto'
import { createRequire } from 'node:module'
import { CID } from 'multiformats/cid'
import * as Digest from 'multiformats/hashes/digest'
import { varint } from 'multiformats'

/**
 * The piece commitment a simulated Curio computes over the bytes it receives
 * (CommP: FR32 padding, then a binary SHA-256 tree truncated to 254 bits), the
 * piece CIDs that name it (FRC-0069), and the Merkle inclusion proofs PDP asks
 * for. Written for the simulated provider alone: it shares nothing with the
 * client side, so a client bug in either cannot hide the other's.
 */

/** A 32-byte tree node. */
export type Node = Uint8Array

/** Multihash and codec codes (multicodec table). */
export const RAW_CODEC = 0x55
export const FIL_COMMITMENT_UNSEALED = 0xf101
export const SHA2_256_TRUNC254_PADDED = 0x1012
export const FR32_SHA256_TRUNC254_PADBINTREE = 0x1011

/** Curio pdp/handlers_upload.go: PieceSizeMinLimit = 128 padded bytes unpadded, 127 bytes. */
export const PIECE_SIZE_MIN = 127
/** Curio pdp/handlers_upload.go: PieceSizeMaxLimit = the 1 GiB memtree unpadded, 1 GiB × 127/128. */
export const PIECE_SIZE_MAX = ((1 << 30) / 128) * 127

/** Leaves per batch hashed in one go (2 MiB of padded data). */
const BATCH_LEVEL = 16
const BATCH_LEAVES = 1 << BATCH_LEVEL
/** Raw bytes that make one batch: 127 per 4 leaves. */
const BATCH_RAW = (BATCH_LEAVES / 4) * 127
/** The level whose nodes are kept to answer proofs without rehashing the whole piece (Curio tasks/pdpv0/task_save_cache.go keeps a layer too). */
export const CACHE_LEVEL = 10

type HashPairs = (input: Uint8Array, output: Uint8Array) => void

/** SHA-256 of each 64-byte pair in `input` into `output`, native when the hashtree binding loads. */
const hashPairs: HashPairs = (() => {
  try {
    const native = createRequire(import.meta.url)('@chainsafe/hashtree') as { hashInto: HashPairs }
    native.hashInto(new Uint8Array(64), new Uint8Array(32))
    return (input, output) => native.hashInto(input, output)
  } catch {
    return (input, output) => {
      for (let i = 0, o = 0; i < input.length; i += 64, o += 32) {
        output.set(
          createHash('sha256')
            .update(input.subarray(i, i + 64))
            .digest(),
          o,
        )
      }
    }
  }
})()

/** One tree level up: pairs hashed, each result truncated to 254 bits (the top two bits of its last byte cleared). */
function hashLevel(level: Uint8Array): Uint8Array {
  const out = new Uint8Array(level.length / 2)
  hashPairs(level, out)
  for (let i = 31; i < out.length; i += 32) out[i] &= 0x3f
  return out
}

/** The parent of two nodes. */
export function parentNode(left: Node, right: Node): Node {
  const pair = new Uint8Array(64)
  pair.set(left, 0)
  pair.set(right, 32)
  return hashLevel(pair)
}

/** Roots of all-zero subtrees by height: zeroRoots[0] is a zero leaf. */
export const zeroRoots: Node[] = (() => {
  const roots: Node[] = [new Uint8Array(32)]
  for (let h = 1; h <= 64; h++) roots.push(parentNode(roots[h - 1], roots[h - 1]))
  return roots
})()

/**
 * FR32 padding of whole 127-byte quads: each 127 bytes become four 32-byte
 * leaves holding 254 bits each (bits taken in order, least significant first;
 * the top two bits of every leaf are zero). `raw.length` is a multiple of 127.
 */
export function fr32Pad(raw: Uint8Array, out: Uint8Array = new Uint8Array((raw.length / 127) * 128)): Uint8Array {
  for (let q = 0, i = 0, o = 0; q < raw.length / 127; q++, i += 127, o += 128) {
    // Leaf 0: bits 0..253, the first 31 bytes and six bits of the 32nd.
    for (let j = 0; j < 31; j++) out[o + j] = raw[i + j]
    out[o + 31] = raw[i + 31] & 0x3f
    // Leaf 1 starts at bit 254 (byte 31, bit 6), leaf 2 at bit 508 (byte 63, bit 4), leaf 3 at bit 762 (byte 95, bit 2).
    for (let j = 0; j < 32; j++) out[o + 32 + j] = (raw[i + 31 + j] >> 6) | ((raw[i + 32 + j] << 2) & 0xff)
    out[o + 63] &= 0x3f
    for (let j = 0; j < 32; j++) out[o + 64 + j] = (raw[i + 63 + j] >> 4) | ((raw[i + 64 + j] << 4) & 0xff)
    out[o + 95] &= 0x3f
    for (let j = 0; j < 31; j++) out[o + 96 + j] = (raw[i + 95 + j] >> 2) | ((raw[i + 96 + j] << 6) & 0xff)
    out[o + 127] = raw[i + 126] >> 2
  }
  return out
}

/** Tree height of a piece of `rawSize` bytes: its padded size is the next power of two of ⌈raw/127⌉×128, at least 128 bytes (4 leaves). */
export function pieceHeight(rawSize: number): number {
  const leaves = Math.ceil(rawSize / 127) * 4
  let height = 2
  while (2 ** height < leaves) height++
  return height
}

/** Padded piece size in bytes for a tree of `height`. */
export const paddedSizeOf = (height: number): number => 2 ** height * 32

/** FRC-0069's padding: the zero bytes added to the raw data before FR32 to fill the tree. */
export const paddingOf = (rawSize: number, height: number): number => 2 ** (height - 2) * 127 - rawSize

/** Raw size named by a PieceCIDv2's padding and height. */
export const rawSizeOf = (padding: number, height: number): number => 2 ** (height - 2) * 127 - padding

/** Leaves holding data, as PDPVerifier counts them (FilOzone/pdp src/Cids.sol leafCount). */
export function leafCountOf(padding: number, height: number): number {
  return 2 ** height - Math.floor(Math.floor((128 * padding) / 127) / 32)
}

export interface PieceCommitment {
  /** The tree root (CommP). */
  root: Node
  height: number
  rawSize: number
  /** Nodes at level min(height, CACHE_LEVEL) that cover data, in order. */
  layer: Uint8Array
  layerLevel: number
}

/** The PieceCIDv1 (fil-commitment-unsealed, sha2-256-trunc254-padded) of a root. */
export function pieceCidV1(root: Node): CID {
  return CID.create(1, FIL_COMMITMENT_UNSEALED, Digest.create(SHA2_256_TRUNC254_PADDED, root))
}

/** The PieceCIDv2 (FRC-0069: raw codec, multihash digest = uvarint padding ‖ height ‖ root). */
export function pieceCidV2(root: Node, rawSize: number, height = pieceHeight(rawSize)): CID {
  const padding = paddingOf(rawSize, height)
  const paddingBytes = varint.encodeTo(padding, new Uint8Array(varint.encodingLength(padding)))
  const digest = new Uint8Array(paddingBytes.length + 1 + 32)
  digest.set(paddingBytes, 0)
  digest[paddingBytes.length] = height
  digest.set(root, paddingBytes.length + 1)
  return CID.create(1, RAW_CODEC, Digest.create(FR32_SHA256_TRUNC254_PADBINTREE, digest))
}

export interface ParsedPieceCid {
  v1: CID
  /** Undefined when the input was a v1 CID (no size). */
  v2?: CID
  root: Node
  height?: number
  padding?: number
  rawSize?: number
}

/**
 * Parses a piece CID as Curio's pdp/piece_cid.go ParsePieceCid does (v1 or v2);
 * `requireV2` gives ParsePieceCidV2. Throws an Error whose message reads as Curio's.
 */
export function parsePieceCid(text: string, requireV2 = false): ParsedPieceCid {
  let cid: CID
  try {
    cid = CID.parse(text)
  } catch (err) {
    throw new Error(`${requireV2 ? 'invalid CID' : 'failed to decode piece CID'}: ${(err as Error).message}`, { cause: err })
  }
  const code = cid.multihash.code
  if (code === FR32_SHA256_TRUNC254_PADBINTREE) {
    const bytes = cid.multihash.digest
    let padding: number
    let read: number
    try {
      ;[padding, read] = varint.decode(bytes)
    } catch {
      throw new Error('failed to extract v1 from v2: invalid padding')
    }
    if (bytes.length !== read + 1 + 32) throw new Error('failed to extract v1 from v2: invalid digest length')
    const height = bytes[read]
    const root = bytes.slice(read + 1)
    if (height < 2 || height > 50 || padding >= 2 ** (height - 2) * 127)
      throw new Error('failed to extract v1 from v2: invalid height or padding')
    return { v1: pieceCidV1(root), v2: cid, root, height, padding, rawSize: rawSizeOf(padding, height) }
  }
  if (requireV2) throw new Error(`piece CID must be PieceCIDv2 format (got multihash type ${code})`)
  if (code === SHA2_256_TRUNC254_PADDED && cid.multihash.digest.length === 32) return { v1: cid, root: cid.multihash.digest.slice() }
  throw new Error(`unsupported piece CID type: ${code}`)
}

/**
 * Incremental merkle stack over subtree roots: push nodes of a level in order;
 * equal levels merge. `finish(height)` pads with zero subtrees up to `height`.
 */
class NodeStack {
  private readonly stack: { level: number; node: Node }[] = []
  push(level: number, node: Node): void {
    let entry = { level, node }
    while (this.stack.length > 0 && this.stack[this.stack.length - 1].level === entry.level) {
      const left = this.stack.pop()!
      entry = { level: entry.level + 1, node: parentNode(left.node, entry.node) }
    }
    this.stack.push(entry)
  }
  finish(height: number): Node {
    if (this.stack.length === 0) return zeroRoots[height]
    while (this.stack.length > 1 || this.stack[0].level < height) {
      const top = this.stack.pop()!
      // An unmerged node is always a left child: its right sibling lies in the zero padding.
      this.push(top.level + 1, parentNode(top.node, zeroRoots[top.level]))
    }
    return this.stack[0].node
  }
}

/** Hashes `leaves` (a power-of-two count of 32-byte nodes) up `levels` levels; `onLevel` sees each level (0 = the leaves). */
function hashUp(leaves: Uint8Array, levels: number, onLevel?: (level: number, nodes: Uint8Array) => void): Uint8Array {
  let nodes = leaves
  onLevel?.(0, nodes)
  for (let l = 1; l <= levels; l++) {
    nodes = hashLevel(nodes)
    onLevel?.(l, nodes)
  }
  return nodes
}

/**
 * Streaming CommP: feed raw bytes with `update`, then `digest()`. Memory stays
 * at one 2 MiB batch plus the kept layer (32 bytes per 1024 leaves).
 */
export class PieceHasher {
  private readonly pending = new Uint8Array(BATCH_RAW)
  private pendingLength = 0
  private rawSize = 0
  private batches = 0
  private readonly stack = new NodeStack()
  private readonly layerParts: Uint8Array[] = []

  get size(): number {
    return this.rawSize
  }

  update(bytes: Uint8Array): void {
    let at = 0
    while (at < bytes.length) {
      const take = Math.min(bytes.length - at, BATCH_RAW - this.pendingLength)
      this.pending.set(bytes.subarray(at, at + take), this.pendingLength)
      this.pendingLength += take
      at += take
      this.rawSize += take
      if (this.pendingLength === BATCH_RAW) {
        this.fullBatch()
        this.pendingLength = 0
      }
    }
  }

  private fullBatch(): void {
    const root = hashUp(fr32Pad(this.pending), BATCH_LEVEL, (level, nodes) => {
      if (level === CACHE_LEVEL) this.layerParts.push(nodes.slice())
    })
    this.stack.push(BATCH_LEVEL, root)
    this.batches++
  }

  digest(): PieceCommitment {
    const rawSize = this.rawSize
    const height = pieceHeight(rawSize)
    const layerLevel = Math.min(height, CACHE_LEVEL)
    const dataLeaves = Math.ceil(rawSize / 127) * 4
    let root: Node
    if (this.batches === 0) {
      // The whole piece fits in one batch: pad its leaves with zeros to the full tree.
      const quads = Math.ceil(this.pendingLength / 127)
      const raw = new Uint8Array(quads * 127)
      raw.set(this.pending.subarray(0, this.pendingLength))
      const leaves = new Uint8Array(2 ** height * 32)
      fr32Pad(raw, leaves)
      root = hashUp(leaves, height, (level, nodes) => {
        if (level === layerLevel) this.layerParts.push(nodes.slice())
      })
    } else {
      if (this.pendingLength > 0) {
        // The last, partial batch: zeros after the data are the tree's own padding.
        this.pending.fill(0, this.pendingLength)
        this.fullBatch()
      }
      root = this.stack.finish(height)
    }
    const layerNodes = Math.ceil(dataLeaves / 2 ** layerLevel)
    const layer = new Uint8Array(layerNodes * 32)
    let offset = 0
    for (const part of this.layerParts) {
      if (offset >= layer.length) break
      const take = part.subarray(0, Math.min(part.length, layer.length - offset))
      layer.set(take, offset)
      offset += take.length
    }
    return { root, height, rawSize, layer, layerLevel }
  }
}

/** CommP of a whole buffer. */
export function commP(bytes: Uint8Array): PieceCommitment {
  const hasher = new PieceHasher()
  hasher.update(bytes)
  return hasher.digest()
}

/** A Merkle inclusion proof of one leaf, in PDPVerifier's IPDPTypes.Proof shape: siblings from the leaf up. */
export interface LeafProof {
  leaf: Node
  proof: Node[]
}

/** Reads raw piece bytes; a range past the end reads short. */
export type ReadRange = (offset: number, length: number) => Promise<Uint8Array>

/**
 * The proof of leaf `leafIndex` of a piece whose kept layer is `layer` (at
 * `layerLevel`): the subtree under the challenged layer node is rebuilt from
 * the raw bytes, the rest of the path comes from the layer.
 */
export async function proveLeaf(
  read: ReadRange,
  piece: { height: number; layer: Uint8Array; layerLevel: number },
  leafIndex: number,
): Promise<LeafProof> {
  const { height, layer, layerLevel } = piece
  if (!(leafIndex >= 0 && leafIndex < 2 ** height)) throw new RangeError(`leaf ${leafIndex} is outside a tree of height ${height}`)
  const subtree = Math.floor(leafIndex / 2 ** layerLevel)
  const quads = 2 ** (layerLevel - 2)
  const raw = new Uint8Array(quads * 127)
  const got = await read(subtree * quads * 127, raw.length)
  raw.set(got.subarray(0, Math.min(got.length, raw.length)))
  const within = leafIndex - subtree * 2 ** layerLevel
  const proof: Node[] = []
  let leaf: Node = new Uint8Array(32)
  const subRoot = hashUp(fr32Pad(raw), layerLevel, (level, nodes) => {
    if (level === layerLevel) return
    const index = within >> level
    if (level === 0) leaf = nodes.slice(index * 32, index * 32 + 32)
    const sibling = index ^ 1
    proof.push(nodes.slice(sibling * 32, sibling * 32 + 32))
  })
  // The layer was computed from the same bytes; a mismatch means the data changed since (lost or corrupted).
  const kept = layer.subarray(subtree * 32, subtree * 32 + 32)
  if (kept.length === 32 && !bytesEqual(kept, subRoot)) throw new Error('piece data does not match its commitment')
  proof.push(...upperPath(layer, layerLevel, height, subtree))
  return { leaf, proof }
}

/** Siblings from `layerLevel` up to the root for the node `index` of the kept layer (absent nodes are zero subtrees). */
function upperPath(layer: Uint8Array, layerLevel: number, height: number, index: number): Node[] {
  const path: Node[] = []
  let nodes = layer
  let count = layer.length / 32
  for (let level = layerLevel; level < height; level++) {
    const sibling = index ^ 1
    path.push(sibling < count ? nodes.slice(sibling * 32, sibling * 32 + 32) : zeroRoots[level])
    // Next level: pair up, padding an odd tail with this level's zero subtree.
    const parents = Math.ceil(count / 2)
    const pairs = new Uint8Array(parents * 64)
    pairs.set(nodes.subarray(0, count * 32))
    if (count % 2 === 1) pairs.set(zeroRoots[level], count * 32)
    nodes = hashLevel(pairs)
    count = parents
    index >>= 1
  }
  return path
}

/** Root reached from a leaf and its proof (MerkleVerify.processInclusionProofMemory in FilOzone/pdp src/Proofs.sol). */
export function rootFromProof(leaf: Node, proof: Node[], position: number): Node {
  let node = leaf
  for (const sibling of proof) {
    node = position % 2 === 0 ? parentNode(node, sibling) : parentNode(sibling, node)
    position = Math.floor(position / 2)
  }
  return node
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}
