import type { FileHandle } from 'node:fs/promises'
import { GatewayError, notFound } from '../errors.ts'
import { readExactly, type BlockFiles } from './block-files.ts'
import type { LocalBytes } from './types.ts'
import type { Repository } from './types.ts'

// Large leaves are handed out in slices so a reader never holds much at once.
const MAX_SLICE = 256 * 1024
// Leaves of offloaded groups fetched ahead of the reader: at most this many requests (and ≤ 1 MiB blocks) at once.
const READ_AHEAD = 4

/**
 * Streams stored content, or the inclusive byte range [start, end] of it,
 * reading only the leaves that overlap the range: from this disk, or for an
 * offloaded group from its providers, block by block, in order, a few ahead.
 * Unknown content, impossible ranges and offloaded data no provider can send
 * fail at the first read, before any byte (WebDAV's GET pulls the first
 * chunk before it sends headers).
 */
export function readContent(
  repo: Repository,
  files: BlockFiles,
  cid: string,
  range?: { start: number; end: number },
  local?: Pick<LocalBytes, 'holdForRead' | 'remoteBlocks'>,
): AsyncIterable<Uint8Array> {
  return (async function* () {
    const content = await repo.content(cid)
    if (!content) throw notFound('Content')
    let start = 0
    let end = content.size - 1
    if (range) {
      if (
        !Number.isSafeInteger(range.start) ||
        !Number.isSafeInteger(range.end) ||
        range.start < 0 ||
        range.end < range.start ||
        range.start >= content.size
      ) {
        throw new GatewayError(
          416,
          'RANGE_NOT_SATISFIABLE',
          `Range ${range.start}-${range.end} is outside the content (${content.size} bytes)`,
        )
      }
      start = range.start
      end = Math.min(range.end, content.size - 1)
    }
    if (end < start) return
    const leaves = await repo.leavesInRange(cid, start, end)

    const readers = new Map<number, FileHandle>()
    const groupIds = [...new Set(leaves.map((l) => l.groupId))]
    const hold = local ? await local.holdForRead(groupIds) : undefined
    const stop = new AbortController()
    const ahead = new Map<number, Promise<Uint8Array>>()
    let done = false
    const finish = async () => {
      if (done) return
      done = true
      stop.abort(new Error('read finished'))
      await Promise.allSettled([...readers.values()].map((r) => r.close()))
      await hold?.release()
    }
    try {
      const remote = hold && hold.remote.size > 0 ? local!.remoteBlocks(stop.signal) : undefined
      // An offloaded group nobody can send is a clean error status, not a cut-off body.
      await remote?.prepare(hold!.remote)
      /** Starts fetching the offloaded leaves among the next READ_AHEAD. */
      const fetchAhead = (from: number) => {
        for (let j = from; j < Math.min(leaves.length, from + READ_AHEAD); j++) {
          const leaf = leaves[j]
          if (!hold!.remote.has(leaf.groupId) || ahead.has(j)) continue
          const p = remote!.block(leaf.groupId, leaf.cid, leaf.length)
          p.catch(() => {}) // awaited in turn below; a reader gone early must not leave it unhandled
          ahead.set(j, p)
        }
      }
      // One slice is held back, so the groups are released before the last byte goes out:
      // a client that has every byte sees the final state.
      let held: Uint8Array | undefined
      for (let i = 0; i < leaves.length; i++) {
        const leaf = leaves[i]
        // Bytes of this leaf that fall inside [start, end].
        let from = Math.max(start, leaf.fileOffset) - leaf.fileOffset
        const to = Math.min(end, leaf.fileOffset + leaf.length - 1) - leaf.fileOffset
        let read: (at: number, n: number) => Promise<Uint8Array>
        if (remote) fetchAhead(i)
        if (hold?.remote.has(leaf.groupId)) {
          const block = await ahead.get(i)!
          ahead.delete(i)
          read = async (at, n) => block.subarray(at, at + n)
        } else {
          let reader = readers.get(leaf.groupId)
          if (!reader) {
            reader = await files.openReader(leaf.groupId)
            readers.set(leaf.groupId, reader)
          }
          const r = reader
          read = (at, n) => readExactly(r, leaf.offset + at, n)
        }
        while (from <= to) {
          const n = Math.min(MAX_SLICE, to - from + 1)
          const slice = await read(from, n)
          if (held) yield held
          held = slice
          from += n
        }
      }
      await finish()
      if (held) yield held
    } finally {
      await finish()
    }
  })()
}
