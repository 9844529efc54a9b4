import type { Faults } from '../../shared/faults.ts'
import type { Logger } from '../../shared/logger.ts'
import { createSerial } from '../store.ts'
import type { BlockFiles } from './block-files.ts'
import type { CarSealer } from './group-car.ts'
import { createClosing } from './group-closing.ts'
import { createFilling } from './group-filling.ts'
import { resumeGroups } from './group-recovery.ts'
import { createSealing } from './group-sealing.ts'
import { sealGroup } from './seal-group.ts'
import type { GroupLifecycle, Repository } from './types.ts'

export interface GroupLifecycleOptions {
  repo: Repository
  files: BlockFiles
  /** The piece size a group aims for: it closes while its CAR still fits the piece (127/128 of it, fr32). */
  groupSize: number
  /** The largest CAR a storage route takes (a PDP copy is one upload of it): a group closes before its CAR passes it too. */
  maxCarBytes?: number
  groupIdleMs: number
  /** How long a group of folders' listings only waits, from its opening, for file data before it closes anyway. */
  listingWaitMs: number
  logger: Logger
  /** Where a test steps in (shared/faults.ts); nothing happens without it. */
  faults?: Faults
  /** Where CARs are written and piece CIDs computed (a worker pool); on this thread when absent. */
  sealer?: CarSealer
  /** Groups sealed at once (the pool's size); 1 without a pool. */
  sealConcurrency?: number
  /** First and longest wait before a failed close or seal is tried again (a full disk, say). */
  retryMs?: { first: number; max: number }
}

/**
 * Moves groups through their states: hands out byte ranges in the writable
 * group (group-filling.ts), closes it when its CAR would no longer fit a piece
 * of `groupSize` (the blocks plus their CAR framing), nor `maxCarBytes`, or has sat idle with data
 * for `groupIdleMs` (a group of folders' listings only: `listingWaitMs` after
 * it opened; group-closing.ts), and seals full groups (CAR + piece
 * CID), up to `sealConcurrency` at once, only once no ingest still writes into
 * them (group-sealing.ts, seal-group.ts); after a restart it resumes
 * (group-recovery.ts). State changes themselves go through the transition
 * table (group-state.ts) via the repository.
 */
export function createGroupLifecycle(o: GroupLifecycleOptions): GroupLifecycle {
  const { repo, files, logger } = o
  // Everything that reads or moves the writable group takes its turn here: its store writes are awaited.
  const serial = createSerial()
  const retryMs = o.retryMs ?? { first: 1_000, max: 5 * 60_000 }
  const filling = createFilling({ repo, groupSize: o.groupSize, maxCarBytes: o.maxCarBytes })
  const seal = (id: number) => sealGroup(id, { repo, files, logger, faults: o.faults, sealer: o.sealer })
  const sealing = createSealing({ seal, concurrency: Math.max(1, o.sealConcurrency ?? 1), logger, retryMs })
  const closing = createClosing({
    repo,
    filling,
    sealing,
    logger,
    groupIdleMs: o.groupIdleMs,
    listingWaitMs: o.listingWaitMs,
    serial,
    retryMs,
  })

  return {
    reserve: (length) =>
      serial(async () => {
        if (filling.overflows(length)) await closing.closeWritable()
        const r = await filling.reserve(length)
        closing.armIdle()
        // Full once not even an empty block would fit any more; sealed once the block just reserved is written.
        // The reservation stands either way: a close that fails is tried again by the next one (or the idle timer).
        if (filling.full())
          await closing
            .closeWritable()
            .catch((err) => logger.warn({ err, groupId: r.groupId }, 'closing the full group failed; trying again later'))
        return r
      }),
    retain: (groupId) => filling.retain(groupId),
    release(groupId) {
      if (!filling.release(groupId)) return
      // Not the writable group: a full one (closing it queues it when nobody writes into it).
      if (filling.writableId() === groupId) closing.armIdle()
      else sealing.enqueue(groupId)
    },
    sealWritable: () =>
      serial(async () => {
        const id = filling.writableId()
        if (id !== undefined && ((await repo.group(id))?.size ?? 0) > 0) await closing.closeWritable()
      }),
    groupSize: () => filling.groupSize(),
    limitGroupSize: (pieceSize) =>
      serial(async () => {
        filling.limitGroupSize(pieceSize)
        // A group that already holds more would make a piece too big: it closes with what it has.
        if (filling.full()) await closing.closeWritable()
      }),
    resume: () => serial(() => resumeGroups({ repo, files, filling, closing, sealing })),
    settled: () => sealing.settled(),
    async close() {
      closing.stop()
      sealing.stop()
      // Let a reservation or close in its turn finish.
      await serial(async () => {})
      await sealing.drained()
    },
  }
}
