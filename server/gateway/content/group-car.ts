import * as CarBufferWriter from '@ipld/car/buffer-writer'
import { varint } from 'multiformats'
import { CID } from 'multiformats/cid'
import { open, rename, stat, unlink, type FileHandle } from 'node:fs/promises'
import { dirname } from 'node:path'
import type { BlockFiles } from './block-files.ts'
import { readExactly } from './block-files.ts'
import { createPieceHasher, type PieceInfo } from '../../shared/piece.ts'
import type { Repository } from './types.ts'
import { noFaults, type Faults } from '../../shared/faults.ts'

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
  seal(job: CarJob): Promise<GroupCar>
}

/**
 * The CAR job of a group: its blocks, and as roots the files whose root block
 * lives in this group (or the group's first block when none does: Lotus
 * refuses a CAR without roots).
 */
export async function carJobOf(groupId: number, repo: Repository, files: BlockFiles): Promise<CarJob> {
  const blocks = (await repo.groupBlocks(groupId)).map((b) => ({ cid: b.cid, offset: b.offset, length: b.length }))
  if (blocks.length === 0) throw new Error(`Group ${groupId} has no blocks`)
  const roots = await repo.groupRoots(groupId)
  return {
    groupId,
    blocks,
    roots: roots.length > 0 ? roots : [blocks[0].cid],
    blockPath: files.blockPath(groupId),
    carPath: files.carPath(groupId),
  }
}

/**
 * Writes the group's CAR and computes its piece CID, on `sealer` when given. The `car-writing`
 * fault point stays on this thread: after the first block when writing here, before the job
 * leaves for a sealing thread otherwise (a thread carries no test messages).
 */
export async function writeGroupCar(
  groupId: number,
  repo: Repository,
  files: BlockFiles,
  faults: Faults = noFaults,
  sealer?: CarSealer,
): Promise<GroupCar> {
  const job = await carJobOf(groupId, repo, files)
  if (!sealer) return writeCarFile(job, () => faults.reached('car-writing', { groupId }))
  await faults.reached('car-writing', { groupId })
  return sealer.seal(job)
}

/** Blocks read, hashed and written together: neighbours in the block file, up to this many bytes. */
const BATCH_BYTES = 4 << 20

/**
 * Streams every block of a group into a CARv1 file and computes its piece CID
 * from the same bytes, so the CAR is read once and never held in memory.
 * Reading the next batch of blocks and writing the previous one overlap with
 * hashing the current one, so the thread waits on the disk as little as it can.
 * Writes to a temp file, fsyncs, then renames, so a crash never leaves a
 * half-written CAR under the final name. `afterFirstBlock` runs once the
 * first block is on disk (the `car-writing` fault point: a half-written temp CAR).
 */
export async function writeCarFile(job: CarJob, afterFirstBlock: () => Promise<void> = async () => {}): Promise<GroupCar> {
  const temp = `${job.carPath}.tmp`
  const out = await open(temp, 'w', 0o600)
  const reader = await open(job.blockPath, 'r')
  const hasher = createPieceHasher()
  const batches = batchesOf(job.blocks)
  let carSize: number
  let reading: Promise<Uint8Array[]> | undefined
  let writing: Promise<void> | undefined
  try {
    const header = carHeader(job.roots)
    hasher.update(header)
    writing = inFlight(writeAt(out, [header], 0))
    carSize = header.length
    if (batches.length > 0) reading = inFlight(readBatch(reader, batches[0]))
    for (let i = 0; i < batches.length; i++) {
      const parts = await reading!
      reading = i + 1 < batches.length ? inFlight(readBatch(reader, batches[i + 1])) : undefined
      for (const part of parts) hasher.update(part)
      await writing
      writing = inFlight(writeAt(out, parts, carSize))
      for (const part of parts) carSize += part.length
      if (i === 0) {
        await writing
        await afterFirstBlock()
      }
    }
    await writing
    await out.datasync()
  } catch (err) {
    // Let what is still in flight settle before the files close under it.
    await Promise.allSettled([reading, writing])
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

/** The CAR header (roots, version 1), encoded by @ipld/car. */
function carHeader(roots: string[]): Uint8Array {
  const cids = roots.map((c) => CID.parse(c))
  return CarBufferWriter.close(
    CarBufferWriter.createWriter(new ArrayBuffer(CarBufferWriter.headerLength({ roots: cids })), { roots: cids }),
  )
}

/** The first block alone (the `car-writing` fault point comes right after it), then runs of neighbours up to BATCH_BYTES. */
function batchesOf(blocks: CarJob['blocks']): CarJob['blocks'][] {
  if (blocks.length === 0) return []
  const batches = [blocks.slice(0, 1)]
  let batch: CarJob['blocks'] = []
  let bytes = 0
  for (const b of blocks.slice(1)) {
    const last = batch.at(-1)
    if (last && (last.offset + last.length !== b.offset || bytes + b.length > BATCH_BYTES)) {
      batches.push(batch)
      batch = []
      bytes = 0
    }
    batch.push(b)
    bytes += b.length
  }
  if (batch.length > 0) batches.push(batch)
  return batches
}

/** A batch of neighbouring blocks in one read, as CAR sections: varint(length) and CID, then the block's bytes. */
async function readBatch(reader: FileHandle, batch: CarJob['blocks']): Promise<Uint8Array[]> {
  const start = batch[0].offset
  const end = batch[batch.length - 1].offset + batch[batch.length - 1].length
  const bytes = await readExactly(reader, start, end - start)
  const parts: Uint8Array[] = []
  for (const b of batch) {
    const cid = CID.parse(b.cid).bytes
    const head = new Uint8Array(varint.encodingLength(cid.length + b.length) + cid.length)
    varint.encodeTo(cid.length + b.length, head, 0)
    head.set(cid, head.length - cid.length)
    parts.push(head, bytes.subarray(b.offset - start, b.offset - start + b.length))
  }
  return parts
}

/** Writes `parts` one after another from `position`, however the OS splits the writes. */
async function writeAt(out: FileHandle, parts: Uint8Array[], position: number): Promise<void> {
  let left = parts
  while (left.length > 0) {
    let { bytesWritten } = await out.writev(left, position)
    position += bytesWritten
    while (left.length > 0 && bytesWritten >= left[0].length) {
      bytesWritten -= left[0].length
      left = left.slice(1)
    }
    if (bytesWritten > 0) left = [left[0].subarray(bytesWritten), ...left.slice(1)]
  }
}

/** Marks a promise that is awaited later as handled now: if it fails while another is awaited, it must not count as unhandled. */
function inFlight<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {})
  return promise
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
