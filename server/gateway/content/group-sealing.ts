import { createBackoff } from '../../shared/disk.ts'
import type { Logger } from '../../shared/logger.ts'

/** Full groups waiting to be sealed, and those being sealed now. */
export interface Sealing {
  /** Queues a full group (once) and starts sealing it as soon as a slot is free. */
  enqueue(groupId: number): void
  /** Resolves when no sealing work is queued or running. */
  settled(): Promise<void>
  /** Starts no group and no retry from now on. */
  stop(): void
  /** Waits for the groups being sealed now, then wakes whoever waits for `settled`. */
  drained(): Promise<void>
}

export interface SealingOptions {
  /** Seals one group, resuming wherever a previous try stopped (seal-group.ts). */
  seal: (groupId: number) => Promise<void>
  /** Groups sealed at once. */
  concurrency: number
  logger: Logger
  /** First and longest wait before failed groups are tried again. */
  retryMs: { first: number; max: number }
}

/**
 * Seals queued groups, up to `concurrency` at once. A group whose sealing
 * fails (a full disk, say) stays in its state and is tried again, with the
 * others that failed in the same round, after a back-off; a restart retries it too.
 */
export function createSealing(o: SealingOptions): Sealing {
  const { logger } = o
  const queue: number[] = []
  /** Groups being sealed now. */
  const running = new Set<Promise<void>>()
  /** Groups whose sealing failed in this round: tried again together after a back-off. */
  let failed: number[] = []
  let retryTimer: NodeJS.Timeout | undefined
  let stopped = false
  const waiters: (() => void)[] = []
  const backoff = createBackoff(o.retryMs.first, o.retryMs.max)

  const enqueue = (id: number) => {
    if (!queue.includes(id)) queue.push(id)
    pump()
  }

  /** Starts sealing queued groups while fewer than `concurrency` are under way. */
  function pump(): void {
    while (running.size < o.concurrency && queue.length > 0 && !stopped) {
      const id = queue.shift()!
      const job: Promise<void> = o
        .seal(id)
        .then(() => {
          if (backoff.failures > 0) logger.info({ groupId: id, failures: backoff.failures }, 'sealing works again')
          backoff.reset()
        })
        .catch((err) => {
          // Left in its state (a full disk, say) and tried again after a back-off; a restart retries it too.
          failed.push(id)
          if (backoff.failures === 0) logger.error({ err, groupId: id }, 'sealing group failed; retrying with back-off')
        })
        .finally(() => {
          running.delete(job)
          pump()
          if (running.size === 0) roundDone()
        })
      running.add(job)
    }
  }

  /** Nothing is being sealed: schedule the failed groups again, or wake whoever waits for quiet. */
  function roundDone(): void {
    if (failed.length > 0 && !stopped) {
      const retryIds = failed
      failed = []
      const delayMs = backoff.fail()
      retryTimer = setTimeout(() => {
        retryTimer = undefined
        for (const id of retryIds) enqueue(id)
      }, delayMs)
      retryTimer.unref()
    }
    if (queue.length === 0) waiters.splice(0).forEach((resolve) => resolve())
  }

  return {
    enqueue,
    settled() {
      if (running.size === 0 && queue.length === 0) return Promise.resolve()
      return new Promise((resolve) => waiters.push(resolve))
    },
    stop() {
      stopped = true
      clearTimeout(retryTimer)
    },
    async drained() {
      await Promise.all(running)
      waiters.splice(0).forEach((resolve) => resolve())
    },
  }
}
