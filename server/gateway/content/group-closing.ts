import { createBackoff } from '../../shared/disk.ts'
import type { Logger } from '../../shared/logger.ts'
import type { Filling } from './group-filling.ts'
import type { Sealing } from './group-sealing.ts'
import type { Repository } from './types.ts'

/** Writable → full: for the writable group when it is full or idle, and for writable groups a restart finds stale. */
export interface Closing {
  /** (Re)starts the writable group's idle timer: `groupIdleMs`, or `delayMs` after a failed close. */
  armIdle(delayMs?: number): void
  /**
   * Writable → full for the writable group (call it in the lifecycle's turn);
   * sealing follows once its writers are done. Throws (and keeps the group
   * writable) when the state cannot be written.
   */
  closeWritable(): Promise<void>
  /** Closes writable groups left by an interrupted roll-over; one that cannot be written yet (full disk) is tried again later. */
  closeStale(ids: number[]): Promise<void>
  /** No idle timer and no retry from now on. */
  stop(): void
}

export interface ClosingOptions {
  repo: Repository
  filling: Filling
  sealing: Sealing
  logger: Logger
  groupIdleMs: number
  /** Runs a call in the lifecycle's turn: the idle timer closes the group there. */
  serial: (fn: () => Promise<void>) => Promise<void>
  retryMs: { first: number; max: number }
}

/**
 * Closes the writable group when a reservation finds it full or it has sat
 * idle for `groupIdleMs` with committed data. A close that fails (a full
 * disk, the store cannot write) leaves the group writable and is tried again
 * with back-off: by the idle timer, or for stale groups by their own timer.
 */
export function createClosing(o: ClosingOptions): Closing {
  const { repo, filling, sealing, logger } = o
  let idleTimer: NodeJS.Timeout | undefined
  let stopped = false
  const backoff = createBackoff(o.retryMs.first, o.retryMs.max)

  const clearIdle = () => {
    if (idleTimer) clearTimeout(idleTimer)
    idleTimer = undefined
  }

  const armIdle = (delayMs = o.groupIdleMs) => {
    clearIdle()
    if (stopped || filling.writableId() === undefined) return
    idleTimer = setTimeout(() => void o.serial(onIdle), delayMs)
    idleTimer.unref()
  }

  // A timer must never throw: a failed close (the disk is full, the store cannot
  // write) is logged once and tried again later, and the group stays writable.
  async function onIdle(): Promise<void> {
    idleTimer = undefined
    const id = filling.writableId()
    if (id === undefined) return
    try {
      const g = await repo.group(id)
      if (g && g.size > 0) await closeWritable()
      else {
        // Nothing committed yet but an ingest is still going: look again later.
        const still = filling.writableId()
        if (still !== undefined && filling.writers(still) > 0) armIdle()
      }
      if (backoff.failures > 0) logger.info({ failures: backoff.failures }, 'closing the idle group works again')
      backoff.reset()
    } catch (err) {
      const delayMs = backoff.fail()
      if (backoff.failures === 1)
        logger.error({ err, groupId: filling.writableId(), retryInMs: delayMs }, 'closing the idle group failed; retrying with back-off')
      armIdle(delayMs)
    }
  }

  async function closeWritable(): Promise<void> {
    const id = filling.writableId()
    if (id === undefined) return
    await repo.transition(id, 'seal')
    filling.retire()
    clearIdle()
    logger.debug({ groupId: id }, 'group full')
    if (filling.writers(id) === 0) sealing.enqueue(id)
  }

  async function closeStale(ids: number[]): Promise<void> {
    const left: number[] = []
    for (const id of ids) {
      try {
        await repo.transition(id, 'seal')
        sealing.enqueue(id)
      } catch (err) {
        if (backoff.failures === 0) logger.error({ err, groupId: id }, 'closing a stale writable group failed; retrying with back-off')
        left.push(id)
      }
    }
    if (left.length === 0 || stopped) return
    const timer = setTimeout(() => void closeStale(left), backoff.fail())
    timer.unref()
  }

  return {
    armIdle,
    closeWritable,
    closeStale,
    stop() {
      stopped = true
      clearIdle()
    },
  }
}
