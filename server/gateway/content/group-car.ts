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

/** Everything writing one group's CAR needs, as plain data, so that a worker thread can do it. */
export interface CarJob {
  groupId: number
  /** The group's blocks in CAR order: CID and where they are in the block file. */
  blocks: { cid: string; offset: number; length: number }[]
  roots: string[]
  blockPath: string
  carPath: string
}

/** Runs CAR jobs somewhere (a worker pool); without one they run on the calling thread. */
export interface CarSealer {
  seal(job: CarJob, pause: PauseHook): Promise<GroupCar>
}

/**
 * The CAR job of a group: its blocks, and as roots the files whose root block
 * lives in this group (or the group's first block when none does: Lotus
 * refuses a CAR without roots).
 */
export function carJobOf(groupId: number, repo: Repository, files: BlockFiles): CarJob {
  const blocks = [...repo.groupBlocks(groupId)].map((b) => ({ cid: b.cid, offset: b.offset, length: b.length }))
  if (blocks.length === 0) throw new Error(`Group ${groupId} has no blocks`)
  const roots = repo.groupRoots(groupId)
  return { groupId, blocks, roots: roots.length > 0 ? roots : [blocks[0].cid], blockPath: files.blockPath(groupId), carPath: files.carPath(groupId) }
}

/** Writes the group's CAR and computes its piece CID, on `sealer` when given. */
export function writeGroupCar(groupId: number, repo: Repository, files: BlockFiles, pause: PauseHook = noPause, sealer?: CarSealer): Promise<GroupCar> {
  const job = carJobOf(groupId, repo, files)
  return sealer ? sealer.seal(job, pause) : writeCarFile(job, () => pause('car-writing', { groupId }))
}

/**
 * Streams every block of a group into a CARv1 file and computes its piece CID
 * from the same bytes, so the CAR is read once and never held in memory.
 * Writes to a temp file, fsyncs, then renames, so a crash never leaves a
 * half-written CAR under the final name. `afterFirstBlock` is where crash
 * tests stop (a half-written temp CAR on disk).
 */
export async function writeCarFile(job: CarJob, afterFirstBlock: () => Promise<void> = async () => {}): Promise<GroupCar> {
  const temp = `${job.carPath}.tmp`
  const out = await open(temp, 'w', 0o600)
  const reader = await open(job.blockPath, 'r')
  const hasher = createPieceHasher()
  let carSize = 0
  try {
    const { writer, out: carBytes } = CarWriter.create(job.roots.map((c) => CID.parse(c)))
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
        for (const [i, b] of job.blocks.entries()) {
          const bytes = await readExactly(reader, b.offset, b.length)
          await writer.put({ cid: CID.parse(b.cid), bytes })
          if (i === 0) await afterFirstBlock()
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
  await rename(temp, job.carPath)
  await syncDir(dirname(job.carPath))
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
