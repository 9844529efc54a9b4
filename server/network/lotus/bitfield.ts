/**
 * RLE+ bitfields, as the chain's actors write them (go-bitfield, rle/rleplus.go;
 * the format is in the Filecoin spec's "RLE+ bitset encoding"): bits are read
 * from the least significant bit of each byte; a 2-bit version (0), one bit
 * giving the value of the first run, then run lengths, alternating values:
 * `1` a run of 1; `01` then 4 bits, a run of 0–15; `00` then an unsigned
 * LEB128 varint, any longer run. The rest of the last byte is zero padding.
 */
export class BitfieldError extends Error {
  override name = 'BitfieldError'
}

/** Runs past this many set bits are refused: a PublishStorageDeals return holds a few thousand at most. */
const MAX_SET_BITS = 1 << 20

/** The positions of the set bits, in ascending order. Throws a BitfieldError on a malformed encoding. */
export function decodeRlePlus(bytes: Uint8Array): number[] {
  if (bytes.length === 0) return []
  let pos = 0
  const total = bytes.length * 8
  const bit = (): number => {
    if (pos >= total) throw new BitfieldError('RLE+ bitfield ends inside a run')
    const b = (bytes[pos >> 3] >> (pos & 7)) & 1
    pos++
    return b
  }
  const bits = (n: number): number => {
    let v = 0
    for (let i = 0; i < n; i++) v |= bit() << i
    return v
  }
  if (bits(2) !== 0) throw new BitfieldError('unknown RLE+ version')
  let value = bit()
  const out: number[] = []
  let index = 0
  // Every run's code holds a set bit, and only zero padding follows the last run.
  const end = lastSetBit(bytes)
  while (pos <= end) {
    let run: number
    if (bit() === 1) run = 1
    // Each bit() reads the next bit: the same test twice reads two bits (RLE+'s run-length prefix).
    // eslint-disable-next-line no-dupe-else-if
    else if (bit() === 1) run = bits(4)
    else {
      run = 0
      for (let shift = 0; ; shift += 7) {
        if (shift > 49) throw new BitfieldError('RLE+ run length too long')
        const byte = bits(8)
        run += (byte & 0x7f) * 2 ** shift
        if ((byte & 0x80) === 0) break
      }
    }
    if (value === 1) {
      if (out.length + run > MAX_SET_BITS) throw new BitfieldError('RLE+ bitfield too large')
      for (let i = 0; i < run; i++) out.push(index + i)
    }
    index += run
    value ^= 1
  }
  return out
}

/** The position of the last set bit, -1 when none is. */
function lastSetBit(bytes: Uint8Array): number {
  for (let i = bytes.length - 1; i >= 0; i--) if (bytes[i] !== 0) return i * 8 + 31 - Math.clz32(bytes[i])
  return -1
}
