import type { Repository, Reservation } from './types.ts'

/**
 * CAR bytes a block may cost beyond its own: the section's length varint (≤ 4
 * bytes), its CID (36 for the CIDv1 sha2-256 blocks we store), and, should it
 * be a file's root, that CID again in the header's roots (41 in dag-cbor).
 * Counted for every block, so the estimate never falls short.
 */
export const CAR_BYTES_PER_BLOCK = 96
/** The CAR header without its roots: `{roots: [], version: 1}` and its length varint. */
const CAR_HEADER_BYTES = 32

/** The most CAR bytes a piece of `pieceSize` holds: fr32 spreads 127 bytes over 128. */
export const carCapacity = (pieceSize: number) => Math.floor((pieceSize * 127) / 128)

/** The writable group: bytes reserved for its blocks, and how many blocks. */
interface WritableGroup {
  id: number
  reserved: number
  blocks: number
}

/** The writable group's space, and the ingests still writing into each group. */
export interface Filling {
  /** The writable group's id; undefined until a reservation (or a restart) opens one. */
  writableId(): number | undefined
  /** Whether a block of `length` bytes would push the writable group's CAR past the piece (never for an empty group). */
  overflows(length: number): boolean
  /** Whether not even an empty block would fit the writable group any more. */
  full(): boolean
  /** Reserves `length` bytes in the writable group, opening one if there is none, and retains that group for the caller. */
  reserve(length: number): Promise<Reservation>
  /** Takes up the writable group a previous process left. */
  adopt(group: WritableGroup): void
  /** The writable group was closed: the next reservation opens a new one. */
  retire(): void
  /** An ingest starts depending on pending bytes of this group. */
  retain(groupId: number): void
  /** An ingest is done with this group; true when it was the last one writing into it. */
  release(groupId: number): boolean
  /** How many ingests still write into this group. */
  writers(groupId: number): number
  /** The piece size groups now aim for. */
  groupSize(): number
  /** Groups from now on aim for a piece of at most `pieceSize` (never more than `groupSize` at creation). */
  limitGroupSize(pieceSize: number): void
}

/**
 * Hands out byte ranges in the writable group and counts who still writes
 * where. Deciding when to close is not its job: it only says whether the
 * next block would overflow the piece of `groupSize` (or a CAR of
 * `maxCarBytes`, the largest a storage route takes), or the group is full.
 * Callers take the lifecycle's turn, so reservations never overlap.
 */
export function createFilling(o: { repo: Repository; groupSize: number; maxCarBytes?: number }): Filling {
  let current: WritableGroup | undefined
  const writers = new Map<number, number>()
  let groupSize = o.groupSize
  let capacity = Math.min(carCapacity(groupSize), o.maxCarBytes ?? Infinity)
  /** The CAR the writable group would write, with `extra` more bytes in `blocks` more blocks. */
  const carEstimate = (c: WritableGroup, extra = 0, blocks = 0) =>
    CAR_HEADER_BYTES + c.reserved + extra + (c.blocks + blocks) * CAR_BYTES_PER_BLOCK
  const retain = (groupId: number) => {
    writers.set(groupId, (writers.get(groupId) ?? 0) + 1)
  }

  return {
    writableId: () => current?.id,
    overflows: (length) => current !== undefined && current.blocks > 0 && carEstimate(current, length, 1) > capacity,
    full: () => current !== undefined && carEstimate(current, 0, 1) >= capacity,
    async reserve(length) {
      if (!current) current = { id: await o.repo.createGroup(), reserved: 0, blocks: 0 }
      const r = { groupId: current.id, offset: current.reserved }
      current.reserved += length
      current.blocks++
      retain(r.groupId)
      return r
    },
    adopt(group) {
      current = group
    },
    retire() {
      current = undefined
    },
    retain,
    release(groupId) {
      const n = (writers.get(groupId) ?? 1) - 1
      if (n > 0) {
        writers.set(groupId, n)
        return false
      }
      writers.delete(groupId)
      return true
    },
    writers: (groupId) => writers.get(groupId) ?? 0,
    groupSize: () => groupSize,
    limitGroupSize(pieceSize) {
      groupSize = Math.min(o.groupSize, pieceSize)
      capacity = Math.min(carCapacity(groupSize), o.maxCarBytes ?? Infinity)
    },
  }
}
