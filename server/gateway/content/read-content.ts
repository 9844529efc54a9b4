import type { FileHandle } from 'node:fs/promises'
import { GatewayError, notFound } from '../errors.ts'
import { readExactly, type BlockFiles } from './block-files.ts'
import type { LocalBytes } from './local-bytes.ts'
import type { Repository } from './repository.ts'

// Large leaves are handed out in slices so a reader never holds much at once.
const MAX_SLICE = 256 * 1024

/**
/**
 * Streams stored content, or the inclusive byte range [start, end] of it,
 * reading only the leaves that overlap the range. Unknown content and
 * impossible ranges fail at the first read, before any byte (WebDAV's GET
 * pulls the first chunk before it sends headers).
 */
export function readContent(
  repo: Repository,
  files: BlockFiles,
  cid: string,
  range?: { start: number; end: number },
  local?: Pick<LocalBytes, 'acquire'>,
): AsyncIterable<Uint8Array> {
  return (async function* () {
    const content = await repo.content(cid)
    if (!content) throw notFound('Content')
    let start = 0
    let end = content.size - 1
    if (range) {
      if (!Number.isSafeInteger(range.start) || !Number.isSafeInteger(range.end) || range.start < 0 || range.end < range.start || range.start >= content.size) {
        throw new GatewayError(416, 'RANGE_NOT_SATISFIABLE', `Range ${range.start}-${range.end} is outside the content (${content.size} bytes)`)
      }
      start = range.start
      end = Math.min(range.end, content.size - 1)
    }
    if (end < start) return
    const leaves = await repo.leavesInRange(cid, start, end)

    const readers = new Map<number, FileHandle>()
    // Every group of the range is made local before the first byte, so an offloaded group that cannot come back is a clean error status.
    const release = local ? await local.acquire([...new Set(leaves.map((l) => l.groupId))]) : undefined
    let done = false
    const finish = async () => {
      if (done) return
      done = true
      await Promise.allSettled([...readers.values()].map((r) => r.close()))
      await release?.()
    }
    try {
      // One slice is held back, so the groups are released (a reloaded one is offloaded again)
      // before the last byte goes out: a client that has every byte sees the final state.
      let held: Uint8Array | undefined
      for (const leaf of leaves) {
        let reader = readers.get(leaf.groupId)
        if (!reader) {
          reader = await files.openReader(leaf.groupId)
          readers.set(leaf.groupId, reader)
        }
        // Bytes of this leaf that fall inside [start, end].
        let from = Math.max(start, leaf.fileOffset) - leaf.fileOffset
        const to = Math.min(end, leaf.fileOffset + leaf.length - 1) - leaf.fileOffset
        while (from <= to) {
          const n = Math.min(MAX_SLICE, to - from + 1)
          const slice = await readExactly(reader, leaf.offset + from, n)
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
