import { describe, expect, it } from 'vitest'
import { randomBytes } from 'node:crypto'
import { CID } from 'multiformats/cid'
import { Piece } from '@web3-storage/data-segment'
import * as SynapsePiece from '@filoz/synapse-core/piece'
import { SIZE_CONSTANTS } from '@filoz/synapse-core/utils'
import {
  PDP_MAX_UPLOAD_BYTES,
  createPieceHasher,
  largestGroupSize,
  fr32FourQuanta,
  fr32FourQuantaBytes,
  padPieceCid,
  paddedPieceSize,
  pieceCidV2,
} from '../../server/shared/piece.ts'

const pieceOf = (data: Uint8Array, chunk = data.length || 1) => {
  const h = createPieceHasher()
  for (let i = 0; i < data.length; i += chunk) h.update(data.subarray(i, i + chunk))
  return h.digest()
}
const rootHex = (pieceCid: string) => Buffer.from(CID.parse(pieceCid).multihash.digest).toString('hex')
// (i*7 + i/251) mod 256: the sample data of a Rust CommPHasher's `fixed_reference_roots` test.
const sample = (n: number) => Uint8Array.from({ length: n }, (_, i) => (i * 7 + Math.floor(i / 251)) & 0xff)

describe('piece CID (CommP)', () => {
  it('is a v1 CID with codec fil-commitment-unsealed and multihash sha2-256-trunc254-padded', () => {
    const { pieceCid } = pieceOf(new Uint8Array(100))
    const cid = CID.parse(pieceCid)
    expect(pieceCid.startsWith('baga6ea4seaq')).toBe(true)
    expect(cid.version).toBe(1)
    expect(cid.code).toBe(0xf101)
    expect(cid.multihash.code).toBe(0x1012)
    expect(cid.multihash.digest.length).toBe(32)
  })

  it('matches the published zero-piece commitments', () => {
    // rust-fil-proofs `compute_comm_d(SectorSize(128), &[])` and go-commp-utils zerocomm
    // (level 0 of the table): the root of a 128-byte all-zero piece.
    expect(rootHex(pieceOf(new Uint8Array(127)).pieceCid)).toBe('3731bb99ac689f66eef5973e4a94da188f4ddcae580724fc6f3fd60dfd488333')
    // zerocomm table, 2048-byte piece (rust-fil-proofs test: compute_comm_d(SectorSize(2048), &[])).
    expect(rootHex(pieceOf(new Uint8Array(2032)).pieceCid)).toBe('fc7e928296e516faade986b28f92d44a4f24b935485223376a799027bc18f833')
  })

  it('matches reference roots for non-zero data across fr32 quantum boundaries', () => {
    // Vectors from a Rust CommPHasher test (`fixed_reference_roots`): 126 and 127 bytes fill one
    // 127-byte quantum (128-byte piece); 128 bytes need two quanta (256-byte piece).
    expect(rootHex(pieceOf(sample(126)).pieceCid)).toBe('e7174a9e17b4eab0299c33fb7a5376d9a780ab93cc4873777a7452ed32ecaf14')
    expect(rootHex(pieceOf(sample(127)).pieceCid)).toBe('b3c22ed2e440d87a1dfcf2c7c21bc887742acfbba9d00954a0132b99445dc523')
    const p128 = pieceOf(sample(128))
    expect(rootHex(p128.pieceCid)).toBe('b2bba11fa929911e8a2f530c1a3838d65276f8f6d15f70ca298770f5dca4ca2b')
    expect(p128.pieceSize).toBe(256)
    // Same test: 32 768 bytes of 0x42 fed in 127-byte writes.
    expect(rootHex(pieceOf(new Uint8Array(32_768).fill(0x42), 127).pieceCid)).toBe(
      'cb042c314b73c00e5e1743099e0abb01937bd3e1b8f37d5b4b76f44c6ee9a30c',
    )
  })

  it('agrees with @web3-storage/data-segment (an independent implementation) on random data', () => {
    // 1 040 384 = 127 · 8192 bytes: exactly one 1 MiB padded segment; the +1 spills into a second.
    for (const n of [65, 1000, 1_040_384, 1_040_385, 3_000_001]) {
      const data = randomBytes(n)
      const mine = pieceOf(data, 65_539)
      const reference = Piece.fromPayload(data).toInfo()
      expect(mine.pieceCid, `payload of ${n} bytes`).toBe(reference.link.toString())
      expect(mine.pieceSize).toBe(Number(reference.size))
    }
  })

  it('pads fr32 the same on 32-bit words as byte by byte (the big-endian path)', () => {
    const input = randomBytes(508 * 64)
    const [words, bytes] = [new Uint8Array(512 * 64), new Uint8Array(512 * 64)]
    for (let g = 0; g < 64; g++) {
      fr32FourQuanta(new Uint32Array(input.buffer, input.byteOffset, input.length / 4), 127 * g, new Uint32Array(words.buffer), 128 * g)
      fr32FourQuantaBytes(input, 508 * g, bytes, 512 * g)
    }
    expect(Buffer.from(words).equals(Buffer.from(bytes))).toBe(true)
    // Every 32-byte quad keeps its top two bits clear.
    for (let q = 31; q < words.length; q += 32) expect(words[q] & 0xc0).toBe(0)
  })

  it('does not depend on how the stream is split', () => {
    const data = randomBytes(300_000)
    expect(pieceOf(data, 1).pieceCid).toBe(pieceOf(data).pieceCid)
  })

  it('pads to the next power of two of ceil(n/127)·128', () => {
    expect(paddedPieceSize(127)).toBe(128)
    expect(paddedPieceSize(128)).toBe(256)
    // 127 · 8 = 1016 bytes → 8 quanta = 1024 bytes exactly.
    expect(paddedPieceSize(1016)).toBe(1024)
    expect(paddedPieceSize(1017)).toBe(2048)
  })

  it('refuses payloads shorter than 65 bytes', () => {
    expect(() => pieceOf(new Uint8Array(64))).toThrow(RangeError)
  })

  it("pads a piece CID up to a provider's minimum size as if the payload went on in zeros", () => {
    // Padding folds the root with zero subtrees; hashing the payload followed by zeros
    // (zero bytes stay zero through fr32) up to the bigger piece must give the same CID.
    for (const [payload, target] of [
      [100, 256],
      [300, 1024 ** 2],
      [200_000, 2 * 1024 ** 2],
    ] as const) {
      const data = sample(payload)
      const small = pieceOf(data)
      const padded = new Uint8Array((target / 128) * 127)
      padded.set(data)
      const whole = pieceOf(padded, 65_536)
      expect(whole.pieceSize).toBe(target)
      expect(padPieceCid(small.pieceCid, small.pieceSize, target)).toBe(whole.pieceCid)
    }
    const { pieceCid, pieceSize } = pieceOf(sample(200))
    expect(padPieceCid(pieceCid, pieceSize, pieceSize)).toBe(pieceCid)
    expect(() => padPieceCid(pieceCid, pieceSize, 128)).toThrow(/cannot pad/)
    expect(() => padPieceCid(pieceCid, pieceSize, 1000)).toThrow(/powers of two/)
    expect(() => padPieceCid('bafkqaaa', 128, 256)).toThrow(/not a piece CID/)
  })

  it('names a piece as FRC-0069 does (piece CID v2), the same as the Synapse SDK computes from the bytes', () => {
    // Sizes across the varint's one- and two-byte paddings, and payloads just under and over a power of two.
    for (const n of [65, 127, 128, 1000, 16_256, 16_257, 300_000]) {
      const data = sample(n)
      const v2 = pieceCidV2(pieceOf(data).pieceCid, n)
      expect(v2).toBe(SynapsePiece.calculate(data).toString())
      expect(SynapsePiece.getSizeFromPieceCID(v2)).toBe(n)
    }
    expect(() => pieceCidV2('bafkqaaa', 100)).toThrow(/not a piece CID v1/)
    expect(() => pieceCidV2(pieceOf(sample(100)).pieceCid, 10)).toThrow(/at least 65/)
  })

  it("takes the Synapse SDK's largest upload as the Onchain Cloud's, and sizes a group whose CAR never passes it", () => {
    expect(PDP_MAX_UPLOAD_BYTES).toBe(SIZE_CONSTANTS.MAX_UPLOAD_SIZE)
    // 2^30 · 127/128 = 1 065 353 216: a 1 GiB group's CAR is at most exactly the SDK's limit.
    expect(largestGroupSize(PDP_MAX_UPLOAD_BYTES)).toBe(2 ** 30)
    // Whatever the limit, the group's CAR (127/128 of its size, rounded down) fits it, and one byte more would not.
    for (const limit of [127, 600_000, 1_000_003]) {
      const size = largestGroupSize(limit)
      expect(Math.floor((size * 127) / 128)).toBeLessThanOrEqual(limit)
      expect(((size + 1) * 127) / 128).toBeGreaterThan(limit)
    }
  })
})
