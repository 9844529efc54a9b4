import { statSync } from 'node:fs'
import { unlink } from 'node:fs/promises'
import { createBackoff } from '../../shared/disk.ts'
import type { Logger } from '../../shared/logger.ts'
import type { BlockFiles } from './block-files.ts'
import { carIsIntact, writeGroupCar, type CarSealer } from './group-car.ts'
import type { PauseHook } from './test-pause.ts'
import type { GroupLifecycle, Repository, Reservation } from './types.ts'
import { createSerial } from '../store.ts'

export interface GroupLifecycleOptions {
  repo: Repository
  files: BlockFiles
  /** The piece size a group aims for: it closes while its CAR still fits the piece (127/128 of it, fr32). */
  groupSize: number
  groupIdleMs: number
  logger: Logger
  pause?: PauseHook
  /** Where CARs are written and piece CIDs computed (a worker pool); on this thread when absent. */
  sealer?: CarSealer
  /** Groups sealed at once (the pool's size); 1 without a pool. */
  sealConcurrency?: number
  /** First and longest wait before a failed close or seal is tried again (a full disk, say). */
  retryMs?: { first: number; max: number }
}

/**
 * CAR bytes a block may cost beyond its own: the section's length varint (≤ 4
 * bytes), its CID (36 for the CIDv1 sha2-256 blocks we store), and, should it
 * be a file's root, that CID again in the header's roots (41 in dag-cbor).
 * Counted for every block, so the estimate never falls short.
 */
export const CAR_BYTES_PER_BLOCK = 96
/** The CAR header without its roots: `{roots: [], version: 1}` and its length varint. */
const CAR_HEADER_BYTES = 32

/** The most CAR bytes a piece of `pieceSize` holds: fr32 spreads 127 bytes over 128. */
export const carCapacity = (pieceSize: number) => Math.floor((pieceSize * 127) / 128)

/**
 * Moves groups through their states: hands out byte ranges in the writable
 * group, closes it when its CAR would no longer fit a piece of `groupSize`
 * (the blocks plus their CAR framing) or has sat idle with data for
 * `groupIdleMs`, and seals full groups (CAR + piece CID), up to
 * `sealConcurrency` at once, only once no ingest still writes into them. State changes themselves go through
 * the transition table (group-state.ts) via the repository.
 */
export function createGroupLifecycle(o: GroupLifecycleOptions): GroupLifecycle {
  const { repo, files, logger } = o
  /** The writable group: bytes reserved for its blocks, and how many blocks. */
  let current: { id: number; reserved: number; blocks: number } | undefined
  // Everything that reads or moves `current` takes its turn here: its store writes are awaited.
  const serial = createSerial()
  const capacity = carCapacity(o.groupSize)
  /** The CAR the writable group would write, with `extra` more bytes in one more block, at most. */
  const carEstimate = (c: { reserved: number; blocks: number }, extra = 0, blocks = 0) =>
    CAR_HEADER_BYTES + c.reserved + extra + (c.blocks + blocks) * CAR_BYTES_PER_BLOCK
  const writers = new Map<number, number>()
  const queue: number[] = []
  /** Groups being sealed now. */
  const sealing = new Set<Promise<void>>()
  const sealConcurrency = Math.max(1, o.sealConcurrency ?? 1)
  /** Groups whose sealing failed in this round: tried again together after a back-off. */
  let failed: number[] = []
  let idleTimer: NodeJS.Timeout | undefined
  let closing = false
  const idleWaiters: (() => void)[] = []
  const retry = o.retryMs ?? { first: 1_000, max: 5 * 60_000 }
  const closeBackoff = createBackoff(retry.first, retry.max)
  const sealBackoff = createBackoff(retry.first, retry.max)
  let sealRetry: NodeJS.Timeout | undefined

  const clearIdle = () => {
    if (idleTimer) clearTimeout(idleTimer)
    idleTimer = undefined
  }

  const armIdle = (delayMs = o.groupIdleMs) => {
    clearIdle()
    if (closing || !current) return
    idleTimer = setTimeout(() => void serial(onIdle), delayMs)
    idleTimer.unref()
  }

  // A timer must never throw: a failed close (the disk is full, the store cannot
  // write) is logged once and tried again later, and the group stays writable.
  async function onIdle(): Promise<void> {
    idleTimer = undefined
    if (!current) return
    try {
      const g = await repo.group(current.id)
      if (g && g.size > 0) await closeCurrent()
      // Nothing committed yet but an ingest is still going: look again later.
      else if (current && (writers.get(current.id) ?? 0) > 0) armIdle()
      if (closeBackoff.failures > 0) logger.info({ failures: closeBackoff.failures }, 'closing the idle group works again')
      closeBackoff.reset()
    } catch (err) {
      const delayMs = closeBackoff.fail()
      if (closeBackoff.failures === 1) logger.error({ err, groupId: current?.id, retryInMs: delayMs }, 'closing the idle group failed; retrying with back-off')
      armIdle(delayMs)
    }
  }

  /**
   * Writable → full for the current group (in its turn); sealing follows once
   * its writers are done. Throws (and keeps the group current) when the state
   * cannot be written.
   */
  const closeCurrent = async () => {
    if (!current) return
    const id = current.id
    await repo.transition(id, 'seal')
    current = undefined
    clearIdle()
    logger.debug({ groupId: id }, 'group full')
    if ((writers.get(id) ?? 0) === 0) enqueue(id)
  }

  const enqueue = (id: number) => {
    if (!queue.includes(id)) queue.push(id)
    pump()
  }

  /** Starts sealing queued groups while fewer than `sealConcurrency` are under way. */
  function pump(): void {
    while (sealing.size < sealConcurrency && queue.length > 0 && !closing) {
      const id = queue.shift()!
      const job: Promise<void> = finishGroup(id)
        .then(() => {
          if (sealBackoff.failures > 0) logger.info({ groupId: id, failures: sealBackoff.failures }, 'sealing works again')
          sealBackoff.reset()
        })
        .catch((err) => {
          // Left in its state (a full disk, say) and tried again after a back-off; a restart retries it too.
          failed.push(id)
          if (sealBackoff.failures === 0) logger.error({ err, groupId: id }, 'sealing group failed; retrying with back-off')
        })
        .finally(() => {
          sealing.delete(job)
          pump()
          if (sealing.size === 0) roundDone()
        })
      sealing.add(job)
    }
  }

  /** Nothing is being sealed: schedule the failed groups again, or wake whoever waits for quiet. */
  function roundDone(): void {
    if (failed.length > 0 && !closing) {
      const retryIds = failed
      failed = []
      const delayMs = sealBackoff.fail()
      sealRetry = setTimeout(() => {
        sealRetry = undefined
        for (const id of retryIds) enqueue(id)
      }, delayMs)
      sealRetry.unref()
    }
    if (queue.length === 0) idleWaiters.splice(0).forEach((resolve) => resolve())
  }

  /** Seals writable groups left by an interrupted roll-over; one that cannot be written yet (full disk) is tried again later. */
  async function sealStale(ids: number[]): Promise<void> {
    const left: number[] = []
    for (const id of ids) {
      try {
        await repo.transition(id, 'seal')
        enqueue(id)
      } catch (err) {
        if (closeBackoff.failures === 0) logger.error({ err, groupId: id }, 'closing a stale writable group failed; retrying with back-off')
        left.push(id)
      }
    }
    if (left.length === 0 || closing) return
    const timer = setTimeout(() => void sealStale(left), closeBackoff.fail())
    timer.unref()
  }

  /** full → VRCARDone → ready_for_deals, resuming wherever a previous run stopped. */
  async function finishGroup(id: number): Promise<void> {
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
      const car = await writeGroupCar(id, repo, files, o.pause, o.sealer)
      await repo.recordPiece(id, car)
      logger.info({ groupId: id, pieceCid: car.pieceCid, pieceSize: car.pieceSize, carSize: car.carSize }, 'group CAR written')
      g = (await repo.group(id))!
    }
    if (g.state === 'VRCARDone') {
      if (!(await carIsIntact(files.carPath(id), g.carSize))) {
        // Same blocks give the same CAR and the same piece CID.
        const car = await writeGroupCar(id, repo, files, o.pause, o.sealer)
        if (car.pieceCid !== g.pieceCid) throw new Error(`Rebuilt CAR of group ${id} has a different piece CID`)
      }
      await repo.transition(id, 'verified')
      await files.release(id)
    }
  }

  const retain = (groupId: number) => {
    writers.set(groupId, (writers.get(groupId) ?? 0) + 1)
  }

  return {
    /**
     * Reserves `length` bytes for a new block, in turn, so concurrent ingests
     * never overlap, and retains its group for the caller (who releases it):
     * the group cannot seal before the block is written.
     */
    reserve(length: number): Promise<Reservation> {
      return serial(async () => {
        if (current && current.blocks > 0 && carEstimate(current, length, 1) > capacity) await closeCurrent()
        if (!current) current = { id: await repo.createGroup(), reserved: 0, blocks: 0 }
        const r = { groupId: current.id, offset: current.reserved }
        current.reserved += length
        current.blocks++
        retain(r.groupId)
        armIdle()
        // Full once not even an empty block would fit any more; sealed once the block just reserved is written.
        // The reservation stands either way: a close that fails is tried again by the next one (or the idle timer).
        if (carEstimate(current, 0, 1) >= capacity) await closeCurrent().catch((err) => logger.warn({ err, groupId: r.groupId }, 'closing the full group failed; trying again later'))
        return r
      })
    },
    /** An ingest starts depending on pending bytes of this group. */
    retain,
    /** The ingest is done with this group (committed or failed). */
    release(groupId: number) {
      const n = (writers.get(groupId) ?? 1) - 1
      if (n > 0) {
        writers.set(groupId, n)
        return
      }
      writers.delete(groupId)
      // Not the writable group: a full one (closing it queues it when nobody writes into it).
      if (current?.id === groupId) armIdle()
      else enqueue(groupId)
    },
    /** Closes the writable group now if it holds committed data. */
    sealWritable(): Promise<void> {
      return serial(async () => {
        if (current && ((await repo.group(current.id))?.size ?? 0) > 0) await closeCurrent()
      })
    },
    /** Picks up where a previous process stopped: the writable group, and unfinished sealing. */
    resume(): Promise<void> {
      return serial(async () => {
        const writable = await repo.groupsInState('writable')
        const last = writable.pop()
        // Only one group is ever writable; more means an interrupted roll-over.
        await sealStale(writable.map((g) => g.id))
        if (last) {
          const reserved = statSync(files.blockPath(last.id), { throwIfNoEntry: false })?.size ?? 0
          // Reserved bytes whose block never committed count as one block more: an overestimate is safe.
          current = { id: last.id, reserved, blocks: (await repo.groupBlockCount(last.id)) + 1 }
          if (last.size > 0) armIdle()
          if (carEstimate(current, 0, 1) >= capacity) await closeCurrent()
        }
        for (const g of [...(await repo.groupsInState('full')), ...(await repo.groupsInState('VRCARDone'))]) enqueue(g.id)
      })
    },
    /** Resolves when no sealing work is queued or running. */
    settled(): Promise<void> {
      if (sealing.size === 0 && queue.length === 0) return Promise.resolve()
      return new Promise((resolve) => idleWaiters.push(resolve))
    },
    async close() {
      closing = true
      clearIdle()
      clearTimeout(sealRetry)
      // Let a reservation or close in its turn finish.
      await serial(async () => {})
      await Promise.all(sealing)
      idleWaiters.splice(0).forEach((resolve) => resolve())
    },
  }
}
