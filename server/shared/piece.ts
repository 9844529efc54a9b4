import { createHash } from 'node:crypto'
import { createRequire } from 'node:module'
import { CID } from 'multiformats/cid'
import * as Digest from 'multiformats/hashes/digest'

/** fil-commitment-unsealed */
export const PIECE_CID_CODEC = 0xf101
/** sha2-256-trunc254-padded */
export const PIECE_MULTIHASH = 0x1012
/** CommP is only defined for payloads of at least this many bytes. */
export const MIN_PIECE_PAYLOAD = 65

export interface PieceInfo {
  /** CIDv1 `baga6ea4seaq…` */
  pieceCid: string
  /** Padded piece size: a power of two ≥ ceil(payloadSize / 127) · 128. */
  pieceSize: number
  payloadSize: number
}

export interface PieceHasher {
  update(bytes: Uint8Array): void
  digest(): PieceInfo
}

/** Padded piece size for a payload of `n` bytes (fr32 expands 127 bytes to 128, then round up to 2^k). */
export function paddedPieceSize(n: number): number {
  const fr32 = Math.max(1, Math.ceil(n / 127)) * 128
  let size = 128
  while (size < fr32) size *= 2
  return size
}

/** Bytes of data a padded piece of `pieceSize` holds: fr32 turns 127 bytes into 128. */
export const unpaddedPieceSize = (pieceSize: number): number => (pieceSize / 128) * 127

/**
 * The largest upload the Onchain Cloud takes as one piece: the Synapse SDK's
 * SIZE_CONSTANTS.MAX_UPLOAD_SIZE (0.41 and 1.x alike), what a 1 GiB piece
 * holds after fr32. A PDP copy is one upload of a group's whole CAR, so no
 * CAR may be larger while PDP copies are made (test/shared/piece.test.ts
 * checks the number against the SDK's).
 */
export const PDP_MAX_UPLOAD_BYTES = 1_065_353_216

/**
 * The largest group size (GROUP_SIZE, the piece a group aims for) whose CAR
 * never passes `maxCarBytes`: a group closes while its CAR still fits 127/128
 * of its size (gateway/content/group-filling.ts).
 *
 * @example largestGroupSize(PDP_MAX_UPLOAD_BYTES) // 1073741824: 1 GiB
 */
export const largestGroupSize = (maxCarBytes: number): number => Math.floor((maxCarBytes * 128) / 127)

/**
 * A deal's StoragePricePerEpoch for a piece, from a price per GiB per epoch
 * (what asks and DEAL_PRICE say): price × PieceSize / 2^30, rounded down, the
 * way Boost's client writes it and Boost and Curio check it against their ask
 * (boost cmd/boost/deal_cmd.go, storagemarket/deal_acceptance.go).
 */
export function piecePricePerEpoch(pricePerGiB: bigint, pieceSize: number): bigint {
  return (pricePerGiB * BigInt(pieceSize)) / 2n ** 30n
}

type HashPairs = (input: Uint8Array, output: Uint8Array) => void

/**
 * Hashes every 64-byte pair in `input` into 32 bytes of `output`. The native
 * batch hasher (SHA-NI / AVX) is ~6x faster than one node:crypto call per
 * node, which dominates CommP time; node:crypto stays as the fallback.
 */
const hashPairs: HashPairs = (() => {
  try {
    const native = createRequire(import.meta.url)('@chainsafe/hashtree') as { hashInto: HashPairs }
    return native.hashInto
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

/** Hash pairs, then clear the top two bits of each node (trunc254). */
function hashLevel(input: Uint8Array, output: Uint8Array): void {
  hashPairs(input, output)
  for (let i = 31; i < output.length; i += 32) output[i] &= 0x3f
}

function hashTwo(left: Uint8Array, right: Uint8Array): Uint8Array {
  const input = new Uint8Array(64)
  input.set(left, 0)
  input.set(right, 32)
  const out = new Uint8Array(32)
  hashLevel(input, out)
  return out
}

// Roots of all-zero subtrees by level (level 0 = one 32-byte leaf); enough for 2^64-byte pieces.
const ZERO: Uint8Array[] = [new Uint8Array(32)]
for (let i = 1; i < 60; i++) ZERO.push(hashTwo(ZERO[i - 1], ZERO[i - 1]))

/**
 * fr32: spreads 127 input bytes over 128 output bytes, leaving the top two bits
 * of every 32-byte quad zero (each quad carries 254 payload bits, taken in
 * little-endian bit order).
 *
 * Four quanta at a time (508 bytes in, 512 out: quad k starts 254·k bits in),
 * on 32-bit words: about three times the speed of the same on bytes. `input`
 * and `output` are views of the same bytes as words, on a little-endian host.
 */
export function fr32FourQuanta(input: Uint32Array, from: number, output: Uint32Array, to: number): void {
  for (let k = 0; k < 16; k++) {
    const bit = 254 * k
    const i = from + (bit >>> 5)
    const shift = bit & 31
    const o = to + 8 * k
    if (shift === 0) {
      for (let j = 0; j < 7; j++) output[o + j] = input[i + j]
      output[o + 7] = input[i + 7] & 0x3fffffff
      continue
    }
    let current = input[i]
    for (let j = 0; j < 7; j++) {
      const next = input[i + j + 1]
      output[o + j] = (current >>> shift) | (next << (32 - shift))
      current = next
    }
    // The last word's 30 bits reach into one more input word unless they start within 2 bits of its end.
    output[o + 7] = ((current >>> shift) | (shift > 2 ? input[i + 8] << (32 - shift) : 0)) & 0x3fffffff
  }
}

/** The same, a byte at a time: for big-endian hosts, where the words above would be read byte-swapped. */
export function fr32FourQuantaBytes(input: Uint8Array, from: number, output: Uint8Array, to: number): void {
  for (let q = 0; q < 4; q++) {
    const s = from + 127 * q
    const d = to + 128 * q
    for (let k = 0; k < 31; k++) output[d + k] = input[s + k]
    output[d + 31] = input[s + 31] & 0x3f
    // Quads 2 to 4 start 2, 4 and 6 bits into the input.
    for (const [at, count, shift] of [
      [31, 32, 6],
      [63, 32, 4],
      [95, 31, 2],
    ]) {
      for (let k = 0; k < count; k++) output[d + at + 1 + k] = (input[s + at + k] >> shift) | (input[s + at + 1 + k] << (8 - shift))
    }
    output[d + 63] &= 0x3f
    output[d + 95] &= 0x3f
    output[d + 127] = input[s + 126] >> 2
  }
}

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1

// A segment is 2^SEGMENT_LEVEL leaves (1 MiB of padded data) hashed level by level in batches.
const SEGMENT_LEVEL = 15
const SEGMENT_LEAVES = 1 << SEGMENT_LEVEL
const SEGMENT_BYTES = SEGMENT_LEAVES * 32
/** The payload bytes that fill one segment: 127 for every 128. */
const SEGMENT_INPUT_BYTES = (SEGMENT_BYTES / 128) * 127

/**
 * Streaming CommP (piece commitment) of a payload, as Filecoin computes it:
 * fr32 padding, zero padding to a power of two, then a sha256 binary merkle
 * tree whose nodes have their top two bits cleared. Memory use is constant.
 *
 * @example
 * const hasher = createPieceHasher()
 * for await (const chunk of carBytes) hasher.update(chunk)
 * const { pieceCid, pieceSize } = hasher.digest()
 */
export function createPieceHasher(): PieceHasher {
  let payloadSize = 0
  // Payload bytes waiting for fr32: one segment's worth (8192 quanta), in a buffer of its own so that words line up.
  const staged = new Uint8Array(SEGMENT_INPUT_BYTES)
  const stagedWords = new Uint32Array(staged.buffer)
  let stagedLength = 0
  // fr32 output of the current segment.
  const segment = new Uint8Array(SEGMENT_BYTES)
  const segmentWords = new Uint32Array(segment.buffer)
  // stack[level] = a finished left subtree waiting for its right sibling.
  const stack: (Uint8Array | undefined)[] = []

  // Two alternating level buffers so a segment never allocates per level.
  const levelA = new Uint8Array(SEGMENT_BYTES / 2)
  const levelB = new Uint8Array(SEGMENT_BYTES / 4)

  /** Root of `leaves` (a prefix of a subtree of height `levels`), zero subtrees filling the rest. */
  const subtreeRoot = (leaves: Uint8Array, levels: number): Uint8Array => {
    let current = leaves
    let count = leaves.length / 32
    if (count === 0) return ZERO[levels]
    for (let level = 0; level < levels; level++) {
      const pairs = Math.floor(count / 2)
      const out = level % 2 === 0 ? levelA : levelB
      hashLevel(current.subarray(0, pairs * 64), out.subarray(0, pairs * 32))
      if (count % 2 === 1) out.set(hashTwo(current.subarray(pairs * 64, pairs * 64 + 32), ZERO[level]), pairs * 32)
      current = out
      count = Math.ceil(count / 2)
    }
    return current.slice(0, 32)
  }

  const push = (node: Uint8Array, level: number) => {
    while (stack[level]) {
      node = hashTwo(stack[level]!, node)
      stack[level] = undefined
      level++
    }
    stack[level] = node
  }

  /** fr32 of the staged bytes (zero-filled to whole groups of four quanta); returns the padded length. */
  const padStaged = (): number => {
    const groups = Math.ceil(stagedLength / 508)
    staged.fill(0, stagedLength, groups * 508)
    for (let g = 0; g < groups; g++) {
      if (LITTLE_ENDIAN) fr32FourQuanta(stagedWords, 127 * g, segmentWords, 128 * g)
      else fr32FourQuantaBytes(staged, 508 * g, segment, 512 * g)
    }
    // Zero bytes pad to zero fr32 output, so a short last quantum is just zero-filled.
    return Math.ceil(stagedLength / 127) * 128
  }

  return {
    update(bytes) {
      payloadSize += bytes.length
      for (let offset = 0; offset < bytes.length;) {
        const take = Math.min(SEGMENT_INPUT_BYTES - stagedLength, bytes.length - offset)
        staged.set(bytes.subarray(offset, offset + take), stagedLength)
        stagedLength += take
        offset += take
        if (stagedLength === SEGMENT_INPUT_BYTES) {
          padStaged()
          push(subtreeRoot(segment, SEGMENT_LEVEL), SEGMENT_LEVEL)
          stagedLength = 0
        }
      }
    },

    digest() {
      if (payloadSize < MIN_PIECE_PAYLOAD) {
        throw new RangeError(`CommP needs at least ${MIN_PIECE_PAYLOAD} bytes of payload, got ${payloadSize}`)
      }
      const leaves = segment.subarray(0, padStaged())
      const pieceSize = paddedPieceSize(payloadSize)
      const height = Math.log2(pieceSize / 32)
      let root: Uint8Array
      if (height <= SEGMENT_LEVEL && stack.length === 0) {
        root = subtreeRoot(leaves, height)
      } else {
        if (leaves.length > 0) push(subtreeRoot(leaves, SEGMENT_LEVEL), SEGMENT_LEVEL)
        // Fold the finished subtrees with zero subtrees up to the full height.
        let acc: Uint8Array | undefined
        for (let level = SEGMENT_LEVEL; level < height; level++) {
          const left = stack[level]
          if (left) acc = hashTwo(left, acc ?? ZERO[level])
          else if (acc) acc = hashTwo(acc, ZERO[level])
        }
        root = acc ?? stack[height]!
      }
      const cid = CID.create(1, PIECE_CID_CODEC, Digest.create(PIECE_MULTIHASH, root))
      return { pieceCid: cid.toString(), pieceSize, payloadSize }
    },
  }
}

/**
 * The piece CID of a piece padded with zeros up to `targetSize`, as a client
 * proposes it to a provider whose minimum piece size is larger (Lotus's
 * `commp.PadCommP`): the root is folded with all-zero subtrees, level by
 * level, so nothing is re-read. The provider pads the same bytes the same way.
 */
export function padPieceCid(pieceCid: string, pieceSize: number, targetSize: number): string {
  if (!isPowerOfTwo(pieceSize) || !isPowerOfTwo(targetSize) || pieceSize < 128)
    throw new RangeError('piece sizes are powers of two of at least 128 bytes')
  if (targetSize < pieceSize) throw new RangeError(`cannot pad a ${pieceSize}-byte piece down to ${targetSize} bytes`)
  const cid = CID.parse(pieceCid)
  if (cid.code !== PIECE_CID_CODEC || cid.multihash.code !== PIECE_MULTIHASH) throw new RangeError(`not a piece CID: ${pieceCid}`)
  let root: Uint8Array = new Uint8Array(cid.multihash.digest)
  for (let level = Math.log2(pieceSize / 32); 32 * 2 ** level < targetSize; level++) root = hashTwo(root, ZERO[level])
  return CID.create(1, PIECE_CID_CODEC, Digest.create(PIECE_MULTIHASH, root)).toString()
}

const isPowerOfTwo = (n: number) => Number.isSafeInteger(n) && n > 0 && 2 ** Math.round(Math.log2(n)) === n

/** raw: a piece CID v2 names the bytes themselves (FRC-0069). */
const RAW_CODEC = 0x55
/** fr32-sha256-trunc254-padbintree */
const PIECE_V2_MULTIHASH = 0x1011

/**
 * The FRC-0069 piece CID (`bafkzcib…`) of a piece CID v1 and the payload it
 * was computed from: the same root, with the tree's height and the zeros
 * padded after the payload, so the payload's size can be read back from the
 * CID. The Onchain Cloud (PDP) names pieces this way.
 */
export function pieceCidV2(pieceCid: string, payloadSize: number): string {
  const cid = CID.parse(pieceCid)
  if (cid.code !== PIECE_CID_CODEC || cid.multihash.code !== PIECE_MULTIHASH) throw new RangeError(`not a piece CID v1: ${pieceCid}`)
  if (!Number.isSafeInteger(payloadSize) || payloadSize < MIN_PIECE_PAYLOAD)
    throw new RangeError(`a piece holds at least ${MIN_PIECE_PAYLOAD} bytes`)
  const pieceSize = paddedPieceSize(payloadSize)
  const height = Math.log2(pieceSize / 32)
  const padding = unpaddedPieceSize(pieceSize) - payloadSize
  const varint: number[] = []
  for (let n = padding; ; n = Math.floor(n / 128)) {
    if (n < 128) {
      varint.push(n)
      break
    }
    varint.push((n % 128) | 0x80)
  }
  const digest = new Uint8Array([...varint, height, ...cid.multihash.digest])
  return CID.create(1, RAW_CODEC, Digest.create(PIECE_V2_MULTIHASH, digest)).toString()
}
