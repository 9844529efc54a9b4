import { createBackoff } from '../../shared/disk.ts'
import type { Logger } from '../../shared/logger.ts'
import type { Filling } from './group-filling.ts'
import type { Sealing } from './group-sealing.ts'
import type { GroupRecord, Repository } from './types.ts'

/** The longest delay setTimeout takes (about 24.8 days); a longer one would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1

/** Writable → full: for the writable group when it is full or idle, and for writable groups a restart finds stale. */
export interface Closing {
  /** (Re)starts the writable group's idle timer: `groupIdleMs`, or `delayMs` (after a failed close, or the rest of a listing wait). */
  armIdle(delayMs?: number): void
  /**
   * Writable → full for the writable group (call it in the lifecycle's turn);
   * sealing follows once its writers are done. Throws (and keeps the group
   * writable) when the state cannot be written.
   */
  closeWritable(): Promise<void>
  /**
   * Closes writable groups left by an interrupted roll-over (one of listings only once its listing wait is over);
   * one that cannot be written yet (full disk) is tried again later.
   */
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
  /** How long a group holding only folders' directory nodes (listings) waits, from its opening, before it closes. */
  listingWaitMs: number
  /** Runs a call in the lifecycle's turn: the idle timer closes the group there. */
  serial: (fn: () => Promise<void>) => Promise<void>
  retryMs: { first: number; max: number }
}

/**
 * Closes the writable group when a reservation finds it full or it has sat
 * idle for `groupIdleMs` with committed data. A group holding only folders'
 * directory nodes (the listings every delete, rename or upload rewrites) is
 * not closed by the idle timer: sealed alone it would be stored and paid for
 * on every route (a PDP add fee on each data set) for a few hundred bytes,
 * once per change. The listings are batched instead, not kept off the paid
 * routes, since every folder CID the gateway reports must be fetchable from
 * providers: they wait for a file's bytes to join them (then the idle rule
 * applies), for the group to be full, or `listingWaitMs` from the group's
 * opening, so listings alone cost at most one paid group per wait (a day by
 * default, as groups wait for data on real networks). The wait counts from
 * the group's stored creation time, so a restart does not shorten it.
 * A close that fails (a full disk, the store cannot write) leaves the group
 * writable and is tried again with back-off: by the idle timer, or for stale
 * groups by their own timer.
 */
export function createClosing(o: ClosingOptions): Closing {
  const { repo, filling, sealing, logger } = o
  let idleTimer: NodeJS.Timeout | undefined
  /** Timers of stale groups: those of listings only until their listing wait is over, those whose close failed until the retry. */
  const staleTimers = new Set<NodeJS.Timeout>()
  let stopped = false
  const backoff = createBackoff(o.retryMs.first, o.retryMs.max)
  /** How much longer a group with data waits before it may close: a group of listings only, the rest of its listing wait. */
  const listingWaitLeft = (g: GroupRecord) => (g.listingsOnly ? Math.max(0, g.createdMs + o.listingWaitMs - Date.now()) : 0)

  const clearIdle = () => {
    if (idleTimer) clearTimeout(idleTimer)
    idleTimer = undefined
  }

  const armIdle = (delayMs = o.groupIdleMs) => {
    clearIdle()
    if (stopped || filling.writableId() === undefined) return
    idleTimer = setTimeout(() => void o.serial(onIdle), Math.min(delayMs, MAX_TIMER_MS))
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
      if (g && g.size > 0) {
        const left = listingWaitLeft(g)
        if (left === 0) await closeWritable()
        else armIdle(left)
      } else {
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

  /** Runs `fn` after `delayMs`, unless the closing stops first. */
  const staleLater = (fn: () => Promise<void>, delayMs: number) => {
    const timer = setTimeout(
      () => {
        staleTimers.delete(timer)
        void fn()
      },
      Math.min(delayMs, MAX_TIMER_MS),
    )
    timer.unref()
    staleTimers.add(timer)
  }

  async function closeStale(ids: number[]): Promise<void> {
    if (stopped) return
    const left: number[] = []
    for (const id of ids) {
      try {
        const g = await repo.group(id)
        const wait = g ? listingWaitLeft(g) : 0
        if (wait > 0) {
          staleLater(() => closeStale([id]), wait)
          continue
        }
        await repo.transition(id, 'seal')
        sealing.enqueue(id)
      } catch (err) {
        if (backoff.failures === 0) logger.error({ err, groupId: id }, 'closing a stale writable group failed; retrying with back-off')
        left.push(id)
      }
    }
    if (left.length === 0 || stopped) return
    staleLater(() => closeStale(left), backoff.fail())
  }

  return {
    armIdle,
    closeWritable,
    closeStale,
    stop() {
      stopped = true
      clearIdle()
      for (const timer of staleTimers) clearTimeout(timer)
      staleTimers.clear()
    },
  }
}
