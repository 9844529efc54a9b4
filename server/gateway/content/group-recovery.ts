import { statSync } from 'node:fs'
import type { BlockFiles } from './block-files.ts'
import type { Closing } from './group-closing.ts'
import type { Filling } from './group-filling.ts'
import type { Sealing } from './group-sealing.ts'
import type { Repository } from './types.ts'

/**
 * Picks up where a previous process stopped: takes up its writable group
 * (closing it at once if it is full), closes any other writable group (an
 * interrupted roll-over), and queues every group whose sealing did not finish.
 * Runs in the lifecycle's turn, before any reservation.
 */
export async function resumeGroups(o: {
  repo: Repository
  files: BlockFiles
  filling: Filling
  closing: Closing
  sealing: Sealing
}): Promise<void> {
  const { repo, files, filling, closing, sealing } = o
  const writable = await repo.groupsInState('writable')
  const last = writable.pop()
  // Only one group is ever writable; more means an interrupted roll-over.
  await closing.closeStale(writable.map((g) => g.id))
  if (last) {
    const reserved = statSync(files.blockPath(last.id), { throwIfNoEntry: false })?.size ?? 0
    // Reserved bytes whose block never committed count as one block more: an overestimate is safe.
    filling.adopt({ id: last.id, reserved, blocks: (await repo.groupBlockCount(last.id)) + 1 })
    if (last.size > 0) closing.armIdle()
    if (filling.full()) await closing.closeWritable()
  }
  for (const g of [...(await repo.groupsInState('full')), ...(await repo.groupsInState('VRCARDone'))]) sealing.enqueue(g.id)
}
