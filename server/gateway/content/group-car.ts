import { CarWriter } from '@ipld/car/writer'
import { CID } from 'multiformats/cid'
import { open, rename, stat, unlink } from 'node:fs/promises'
import { dirname } from 'node:path'
import type { BlockFiles } from './block-files.ts'
import { readExactly } from './block-files.ts'
import { createPieceHasher, type PieceInfo } from '../../shared/piece.ts'
import type { Repository } from './repository.ts'
import { noPause, type PauseHook } from './test-pause.ts'

export interface GroupCar extends PieceInfo {
  carSize: number
}

/**
 * Streams every block of a group into a CARv1 file (`<id>.car`) and computes
 * its piece CID from the same bytes, so the CAR is read once and never held
 * in memory. The roots are the files whose root block lives in this group (or
 * the group's first block when none does: Lotus refuses a CAR without roots).
 * Writes to a temp file, fsyncs, then renames, so a crash never leaves a
 * half-written CAR under the final name.
 */
export async function writeGroupCar(groupId: number, repo: Repository, files: BlockFiles, pause: PauseHook = noPause): Promise<GroupCar> {
  const blocks = [...repo.groupBlocks(groupId)]
  if (blocks.length === 0) throw new Error(`Group ${groupId} has no blocks`)
  const rootCids = repo.groupRoots(groupId)
  const roots = (rootCids.length > 0 ? rootCids : [blocks[0].cid]).map((c) => CID.parse(c))

  const target = files.carPath(groupId)
  const temp = `${target}.tmp`
  const out = await open(temp, 'w', 0o600)
  const reader = await files.openReader(groupId)
  const hasher = createPieceHasher()
  let carSize = 0
  try {
    const { writer, out: carBytes } = CarWriter.create(roots)
    const drain = (async () => {
      for await (const chunk of carBytes) {
        hasher.update(chunk)
        let done = 0
        while (done < chunk.length) done += (await out.write(chunk, done, chunk.length - done, carSize + done)).bytesWritten
        carSize += chunk.length
      }
    })()
    const feed = (async () => {
      try {
        for (const [i, b] of blocks.entries()) {
          const bytes = await readExactly(reader, b.offset, b.length)
          await writer.put({ cid: CID.parse(b.cid), bytes })
          // Crash tests stop here: a half-written temp CAR on disk.
          if (i === 0) await pause('car-writing', { groupId })
        }
      } finally {
        await writer.close()
      }
    })()
    await Promise.all([feed, drain])
    await out.datasync()
  } catch (err) {
    await out.close().catch(() => {})
    await unlink(temp).catch(() => {})
    throw err
  } finally {
    await reader.close().catch(() => {})
  }
  await out.close()
  await rename(temp, target)
  await syncDir(dirname(target))
  return { ...hasher.digest(), carSize }
}

/** Whether the group's CAR file is present with the size we recorded. */
export async function carIsIntact(path: string, carSize: number | undefined): Promise<boolean> {
  try {
    return (await stat(path)).size === carSize
  } catch {
    return false
  }
}

async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r')
  try {
    await fh.sync()
  } finally {
    await fh.close()
  }
}
