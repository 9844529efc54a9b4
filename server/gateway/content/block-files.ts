import { open, mkdir, type FileHandle } from 'node:fs/promises'
import { constants } from 'node:fs'
import { join } from 'node:path'

/**
 * The append-only block file of each group (`<dir>/<id>.blocks`). Offsets are
 * reserved by the caller before writing, so concurrent writers never overlap;
 * here we only do positional reads and writes and fsync.
 */
export interface BlockFiles {
  blockPath(groupId: number): string
  carPath(groupId: number): string
  write(groupId: number, offset: number, bytes: Uint8Array): Promise<void>
  /** A read-only handle of its own, so readers never race a writer's close; the caller closes it. */
  openReader(groupId: number): Promise<FileHandle>
  /** Makes every write to this group's file so far durable. */
  sync(groupId: number): Promise<void>
  /** Closes the handle of a group that will not be written again. */
  release(groupId: number): Promise<void>
  close(): Promise<void>
}

export function createBlockFiles(dir: string): BlockFiles {
  const handles = new Map<number, Promise<FileHandle>>()
  let madeDir: Promise<unknown> | undefined
  const blockPath = (id: number) => join(dir, `${id}.blocks`)

  const handle = (id: number): Promise<FileHandle> => {
    let h = handles.get(id)
    if (!h) {
      madeDir ??= mkdir(dir, { recursive: true })
      h = madeDir.then(() => open(blockPath(id), constants.O_RDWR | constants.O_CREAT, 0o600))
      handles.set(id, h)
      // A failed open must not stay cached.
      h.catch(() => handles.delete(id))
    }
    return h
  }

  return {
    blockPath,
    carPath: (id) => join(dir, `${id}.car`),
    async write(id, offset, bytes) {
      const fh = await handle(id)
      let done = 0
      while (done < bytes.length) {
        const { bytesWritten } = await fh.write(bytes, done, bytes.length - done, offset + done)
        done += bytesWritten
      }
    },
    openReader: (id) => open(blockPath(id), 'r'),
    async sync(id) {
      await (await handle(id)).datasync()
    },
    async release(id) {
      const h = handles.get(id)
      if (!h) return
      handles.delete(id)
      await (await h).close()
    },
    async close() {
      const all = [...handles.values()]
      handles.clear()
      await Promise.allSettled(all.map(async (h) => (await h).close()))
    },
  }
}

/** Reads exactly `length` bytes at `offset`. */
export async function readExactly(fh: FileHandle, offset: number, length: number, into = new Uint8Array(length)): Promise<Uint8Array> {
  let done = 0
  while (done < length) {
    const { bytesRead } = await fh.read(into, done, length - done, offset + done)
    if (bytesRead === 0) throw new Error('Block file is shorter than its index says')
    done += bytesRead
  }
  return into
}
