import type { Logger } from '../shared/logger.ts'
import type { FolderSummaries } from './folder-summaries.ts'

/** When the folder index's background run goes: after a change has settled, one at a time, again after a failure. */
export interface FolderRuns {
  /** Summaries of the whole tree now, in the background; directory nodes not stored yet after the settle time. */
  start(): void
  /** The tree changed: a run after the settle time (or, if one is under way, after it, the settle time again). */
  due(): void
  /** Resolves once no run is due (due work runs now, without waiting the settle time). */
  settled(): Promise<void>
  /** No run from now on; resolves once the run under way has ended. */
  close(): Promise<void>
}

export interface FolderRunsOptions {
  summaries: Pick<FolderSummaries, 'summary' | 'storedGroups'>
  /** Where a failing run says so (once until it succeeds again); silent without it. */
  logger?: Logger
  /** How long after a change the run waits for more. */
  settleMs: number
  /** Back-off after a failed run, doubling up to `maxRetryMs`. */
  retryMs: number
  maxRetryMs: number
}

/**
 * The background run: every folder's summary made again along the changed
 * paths, and the directory nodes not stored yet stored. One at a time;
 * changes wait `settleMs` (many PUTs in a row make one run, not one per
 * file). Records never wait for it: they read summaries, which are made on
 * demand.
 */
export function createFolderRuns(o: FolderRunsOptions): FolderRuns {
  const { summaries, settleMs } = o
  let started = false
  let closed = false
  let due = false
  let running: Promise<void> | undefined
  let settleTimer: NodeJS.Timeout | undefined
  let retryTimer: NodeJS.Timeout | undefined
  let failures = 0

  const runOnce = async () => {
    // The root holds every folder: made again along the changed paths only (the rest is kept).
    const root = await summaries.summary('/')
    // An empty tree has nothing to fetch: no directory node stored for it (a fresh gateway writes nothing).
    if (root.filesByGroups.size === 0 && root.subfolders.length === 0) return
    await summaries.storedGroups('/')
  }
  const later = (ms: number) => {
    if (settleTimer || closed) return
    settleTimer = setTimeout(() => {
      settleTimer = undefined
      kick()
    }, ms)
    settleTimer.unref()
  }
  /** Failed: logged once per streak of failures, tried again after a back-off that doubles. */
  const failed = (err: unknown) => {
    if (failures++ === 0)
      o.logger?.warn({ err }, 'making folder summaries or storing their directory nodes failed; retrying in the background')
    due = true
    retryTimer = setTimeout(
      () => {
        retryTimer = undefined
        kick()
      },
      Math.min(o.maxRetryMs, o.retryMs * 2 ** (failures - 1)),
    )
    retryTimer.unref()
  }
  function kick() {
    if (!started || closed || running || retryTimer) return
    clearTimeout(settleTimer)
    settleTimer = undefined
    running = (async () => {
      while (due && !closed) {
        due = false
        try {
          await runOnce()
          if (failures > 0) o.logger?.info({ failures }, 'folder summaries are up to date again')
          failures = 0
        } catch (err) {
          return failed(err)
        }
        // Changed during the run: again after the settle time.
        if (due) return later(settleMs)
      }
    })().finally(() => {
      running = undefined
    })
  }

  return {
    start() {
      started = true
      // Summaries now (a data dir from before: the first record need not make them), in the background;
      // directory nodes not stored yet after the settle time, as after a change.
      summaries.summary('/').catch((err) => o.logger?.warn({ err }, 'making folder summaries at start failed; made when first asked for'))
      due = true
      later(settleMs)
    },
    due() {
      due = true
      if (!running) later(settleMs)
    },
    // Due work now, without the settle time, and until none is left (tests, and before sealing by hand).
    async settled() {
      while (started && !closed) {
        if (due && !running && !retryTimer) kick()
        if (!running) return
        await running
      }
    },
    async close() {
      closed = true
      clearTimeout(retryTimer)
      clearTimeout(settleTimer)
      await Promise.allSettled([running])
    },
  }
}
