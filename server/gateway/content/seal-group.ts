import { unlink } from 'node:fs/promises'
import type { Logger } from '../../shared/logger.ts'
import type { BlockFiles } from './block-files.ts'
import { carIsIntact, writeGroupCar, type CarSealer } from './group-car.ts'
import type { Faults } from '../../shared/faults.ts'
import type { Repository } from './types.ts'

export interface SealGroupOptions {
  repo: Repository
  files: BlockFiles
  logger: Logger
  /** Where a test steps in (shared/faults.ts); nothing happens without it. */
  faults?: Faults
  /** Where the CAR is written and its piece CID computed (a worker pool); on this thread when absent. */
  sealer?: CarSealer
}

/**
 * full → VRCARDone (CAR written, piece CID recorded) → ready_for_deals (block
 * file released), resuming wherever a previous run stopped. A full group with
 * no committed block (only orphan bytes of failed ingests) is deleted instead.
 */
export async function sealGroup(id: number, o: SealGroupOptions): Promise<void> {
  const { repo, files, logger } = o
  let g = await repo.group(id)
  if (!g) return
  if (g.state === 'full') {
    if ((await repo.groupBlockCount(id)) === 0) {
      // Only orphan bytes of failed ingests: nothing refers to this group.
      await repo.deleteGroup(id)
      await files.release(id)
      await unlink(files.blockPath(id)).catch(() => {})
      return
    }
    const car = await writeGroupCar(id, repo, files, o.faults, o.sealer)
    await repo.recordPiece(id, car)
    logger.info({ groupId: id, pieceCid: car.pieceCid, pieceSize: car.pieceSize, carSize: car.carSize }, 'group CAR written')
    g = (await repo.group(id))!
  }
  if (g.state === 'VRCARDone') {
    if (!(await carIsIntact(files.carPath(id), g.carSize))) {
      // Same blocks give the same CAR and the same piece CID.
      const car = await writeGroupCar(id, repo, files, o.faults, o.sealer)
      if (car.pieceCid !== g.pieceCid) throw new Error(`Rebuilt CAR of group ${id} has a different piece CID`)
    }
    await repo.transition(id, 'verified')
    await files.release(id)
  }
}
