/**
 * A test-side piece commitment (CommP) tree, written from the definitions and
 * independent of the SDK: Fr32 padding, a binary SHA-256 tree whose digests
 * have the top two bits of their last byte cleared, and the PieceCIDv2 that
 * names it (FRC-0069). Provers in the tests take their Merkle paths from it.
 */
import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, type Hex } from 'viem'

const LEAF = 32

/** A node of the tree: sha256(left ‖ right) truncated to 254 bits. */
export function sha254Node(left: Uint8Array, right: Uint8Array): Uint8Array {
  const joined = new Uint8Array(64)
  joined.set(left, 0)
  joined.set(right, 32)
  const digest = sha256(joined)
  digest[31] &= 0x3f
  return digest
}

/**
 * Fr32 padding: every 127 bytes (1016 bits, read least significant bit first)
 * become four 32-byte words of 254 bits each, the two top bits of each word's
 * last byte left zero. `data` must be a whole number of 127-byte blocks.
 */
export function fr32Pad(data: Uint8Array): Uint8Array {
  if (data.length % 127 !== 0) throw new Error('fr32Pad takes whole 127-byte blocks')
  const out = new Uint8Array((data.length / 127) * 128)
  const mask = (1n << 254n) - 1n
  for (let block = 0; block < data.length / 127; block++) {
    let bits = 0n
    for (let i = 126; i >= 0; i--) bits = (bits << 8n) | BigInt(data[block * 127 + i])
    for (let word = 0; word < 4; word++) {
      let value = (bits >> BigInt(254 * word)) & mask
      const at = block * 128 + word * 32
      for (let i = 0; i < 32; i++) {
        out[at + i] = Number(value & 0xffn)
        value >>= 8n
      }
    }
  }
  return out
}

function uvarint(value: number): number[] {
  const out: number[] = []
  while (value >= 0x80) {
    out.push((value & 0x7f) | 0x80)
    value >>>= 7
  }
  out.push(value)
  return out
}

export interface PieceTree {
  /** Levels from the leaves (level 0, 32-byte Fr32 words) up to the root (the last level, one node). */
  levels: Uint8Array[][]
  root: Uint8Array
  /** log2 of the leaf count: the CID's height byte, and the length of every proof. */
  height: number
  /** Zero bytes added to the raw data to fill the tree, counted before Fr32 expansion. */
  padding: number
  /** PieceCIDv2 bytes: 0x01 0x55 0x9120, digest length, uvarint padding, height, root. */
  cid: Uint8Array
  cidHex: Hex
  /** Leaves holding some of the data (what PDPVerifier counts: all leaves less the ones only padding fills). */
  dataLeaves: number
  /** The leaf at an index and the siblings from it up to just below the root. */
  proof(index: number): { leaf: Hex; proof: Hex[] }
}

/** Builds the tree of a piece: the data zero-filled to the smallest power-of-two tree (at least 4 leaves) holding it. */
export function buildPieceTree(data: Uint8Array): PieceTree {
  let leaves = 4
  while ((leaves * LEAF * 127) / 128 < data.length) leaves *= 2
  const capacity = (leaves * LEAF * 127) / 128
  const raw = new Uint8Array(capacity)
  raw.set(data)
  const padded = fr32Pad(raw)
  const level0: Uint8Array[] = []
  for (let i = 0; i < leaves; i++) level0.push(padded.subarray(i * LEAF, (i + 1) * LEAF))
  const levels: Uint8Array[][] = [level0]
  while (levels[levels.length - 1].length > 1) {
    const below = levels[levels.length - 1]
    const above: Uint8Array[] = []
    for (let i = 0; i < below.length; i += 2) above.push(sha254Node(below[i], below[i + 1]))
    levels.push(above)
  }
  const root = levels[levels.length - 1][0]
  const height = levels.length - 1
  const padding = capacity - data.length
  const digest = [...uvarint(padding), height, ...root]
  const cid = new Uint8Array([0x01, 0x55, 0x91, 0x20, ...uvarint(digest.length), ...digest])
  const dataLeaves = leaves - Math.floor(Math.floor((padding * 128) / 127) / LEAF)
  return {
    levels,
    root,
    height,
    padding,
    cid,
    cidHex: bytesToHex(cid),
    dataLeaves,
    proof(index) {
      const path: Hex[] = []
      let at = index
      for (let level = 0; level < height; level++) {
        path.push(bytesToHex(levels[level][at ^ 1]))
        at >>= 1
      }
      return { leaf: bytesToHex(levels[0][index]), proof: path }
    },
  }
}
