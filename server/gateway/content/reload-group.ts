import { CarBlockIterator } from '@ipld/car/iterator'
import { open, rename, unlink } from 'node:fs/promises'
import type { Faults } from '../../shared/faults.ts'
import type { Logger } from '../../shared/logger.ts'
import type { BlockFiles } from './block-files.ts'
import { contentUnavailable } from './remote-blocks.ts'
import type { GroupRecord, RemoteSource, Repository } from './types.ts'
import { blockMatchesCid } from './verify-block.ts'

export interface ReloadGroupOptions {
  repo: Repository
  files: BlockFiles
  logger: Logger
  /** Where a test steps in (shared/faults.ts): the `reload` point, after the first block is written. */
  faults: Faults
  /** The providers of the group's deals; with none set, no provider is tried and the reload fails. */
  remote: RemoteSource | undefined
}

/**
 * Where a reload writes the group's blocks: a file of its own, renamed over
 * the block file only once every block has checked out, so a failed or
 * interrupted reload never leaves a block file that looks whole.
 */
export const reloadTempPath = (files: BlockFiles, id: number) => `${files.blockPath(id)}.reload`

/**
 * offloaded → reload: the group's block file comes back from the first
 * provider whose CAR holds exactly its blocks (each checked against its CID
 * and the group's index). A provider that fails is logged and the next one
 * tried; none left: 503 CONTENT_UNAVAILABLE, and the group stays in
 * `reload` until its holder's release sends it back to `offloaded`.
 */
export async function reloadGroup(group: GroupRecord, o: ReloadGroupOptions): Promise<void> {
  await o.repo.transition(group.id, 'reload')
  const tried: string[] = []
  for (const source of (await o.remote?.sources(group)) ?? []) {
    try {
      await restoreFrom(group.id, source.fetch(), o)
      o.logger.info({ groupId: group.id, provider: source.provider }, 'group reloaded from provider')
      return
    } catch (err) {
      tried.push(source.provider)
      o.logger.warn({ err, groupId: group.id, provider: source.provider }, 'reload from provider failed; trying the next')
      await unlink(reloadTempPath(o.files, group.id)).catch(() => {})
    }
  }
  throw contentUnavailable(`${tried.length} provider(s) tried`)
}

/** Writes the blocks of a CAR at their recorded offsets, refusing any block that is not exactly ours. */
async function restoreFrom(id: number, car: AsyncIterable<Uint8Array>, o: ReloadGroupOptions): Promise<void> {
  const expected = new Map<string, { offset: number; length: number }>()
  for (const b of await o.repo.groupBlocks(id)) expected.set(b.cid, b)
  const temp = reloadTempPath(o.files, id)
  const out = await open(temp, 'w', 0o600)
  try {
    const seen = new Set<string>()
    for await (const { cid, bytes } of await CarBlockIterator.fromIterable(car)) {
      const key = cid.toString()
      const at = expected.get(key)
      if (!at || at.length !== bytes.length || !(await blockMatchesCid(cid, bytes)))
        throw new Error(`Block ${key} does not match the group's index`)
      let done = 0
      while (done < bytes.length) done += (await out.write(bytes, done, bytes.length - done, at.offset + done)).bytesWritten
      seen.add(key)
      // The `reload` fault point: group in `reload`, a partial temp file on disk.
      if (seen.size === 1) await o.faults.reached('reload', { groupId: id })
    }
    if (seen.size !== expected.size) throw new Error(`CAR holds ${seen.size} of the group's ${expected.size} blocks`)
    await out.datasync()
  } finally {
    await out.close()
  }
  await rename(temp, o.files.blockPath(id))
}
