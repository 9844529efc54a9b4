import { statfs } from 'node:fs/promises'
import type { Logger } from './logger.ts'

/**
 * Whether `err` (or an error it wraps) says the disk is full: a file write
 * (ENOSPC, or EDQUOT over a quota), SQLite (SQLITE_FULL) or PostgreSQL (53100 disk_full).
 */
export function isDiskFull(err: unknown): boolean {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code
    if (code === 'ENOSPC' || code === 'EDQUOT' || code === 'SQLITE_FULL' || code === '53100') return true
  }
  return false
}

export interface DiskSpaceWatchOptions {
  dir: string
  /** Warn when fewer bytes than this are free under `dir`. */
  warnBelowBytes: number
  intervalMs?: number
  logger: Logger
  /** Free bytes under `dir` (tests inject it). */
  freeBytes?: (dir: string) => Promise<number>
}

export interface DiskSpaceWatch {
  /** Reads the free space now, logging when it crosses the threshold either way. */
  check(): Promise<number>
  stop(): void
}

const statfsFree = async (dir: string) => {
  const s = await statfs(dir)
  return s.bavail * s.bsize
}

/** What uploads must leave free: the bytes still to seal, the upload itself, and a margin. */
export interface SpaceReserve {
  /** Free bytes under the folder (read at most once a second). */
  free(): Promise<number>
  /** Why an upload of `bytes` (0 when unknown) is refused, or undefined when it fits with room to seal. */
  refusal(bytes?: number): Promise<string | undefined>
}

export interface SpaceReserveOptions {
  dir: string
  /** Bytes written but not sealed yet: each becomes a CAR file of about that size. */
  unsealedBytes: () => Promise<number>
  /** Kept free besides; default 2 % of the filesystem, at most 1 GiB. */
  marginBytes?: number
  freeBytes?: (dir: string) => Promise<number>
  /** Whose disk the refusal names (default "The gateway's disk"). */
  disk?: string
}

/**
 * Refuses uploads a margin before the disk is full, so the groups already
 * written can always be sealed: a group that filled the disk would otherwise
 * wait, unsealed, until someone freed as much as it holds.
 */
export function createSpaceReserve(o: SpaceReserveOptions): SpaceReserve {
  const freeBytes = o.freeBytes ?? statfsFree
  let read: { at: number; free: Promise<number> } | undefined
  let margin: Promise<number> | undefined
  const free = () => {
    const now = Date.now()
    if (!read || now - read.at > 1_000) read = { at: now, free: freeBytes(o.dir) }
    return read.free
  }
  const marginBytes = () =>
    (margin ??=
      o.marginBytes !== undefined
        ? Promise.resolve(o.marginBytes)
        : statfs(o.dir).then(
            (s) => Math.min(1024 ** 3, Math.floor(s.blocks * s.bsize * 0.02)),
            () => 0,
          ))
  return {
    free,
    async refusal(bytes = 0) {
      const [available, unsealed, kept] = await Promise.all([free(), o.unsealedBytes(), marginBytes()])
      const needed = unsealed + bytes + kept
      if (available >= needed) return undefined
      return `${o.disk ?? "The gateway's disk"} is nearly full: ${mib(available)} free, and ${mib(unsealed + kept)} are kept for sealing what is already stored${bytes ? ` besides this upload's ${mib(bytes)}` : ''}; nothing was stored. Try again once space is freed.`
    },
  }
}

const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`

/**
 * Watches the free space under the data folder: one warning when it drops
 * below the threshold, one info line when it is back above, nothing in
 * between (a full disk must not flood the log it cannot write).
 */
export function watchDiskSpace(o: DiskSpaceWatchOptions): DiskSpaceWatch {
  const freeBytes = o.freeBytes ?? statfsFree
  let low = false
  const check = async () => {
    const free = await freeBytes(o.dir)
    const isLow = free < o.warnBelowBytes
    if (isLow && !low)
      o.logger.warn(
        { dir: o.dir, freeBytes: free, warnBelowBytes: o.warnBelowBytes },
        'disk space is low: uploads will be refused with 507 once it is full',
      )
    else if (!isLow && low) o.logger.info({ dir: o.dir, freeBytes: free }, 'disk space is back above the warning threshold')
    low = isLow
    return free
  }
  const timer = setInterval(
    () => void check().catch((err) => o.logger.debug({ err }, 'reading free disk space failed')),
    o.intervalMs ?? 60_000,
  )
  timer.unref()
  void check().catch((err) => o.logger.warn({ err, dir: o.dir }, 'cannot read free disk space'))
  return { check, stop: () => clearInterval(timer) }
}

export interface Backoff {
  /** Delay before the next attempt after one more failure. */
  fail(): number
  /** Back to the first delay. */
  reset(): void
  /** Failures in a row so far. */
  readonly failures: number
}

/** Exponential back-off between `firstMs` and `maxMs`, doubling per failure. */
export function createBackoff(firstMs: number, maxMs: number): Backoff {
  let failures = 0
  return {
    fail() {
      failures++
      return Math.min(maxMs, firstMs * 2 ** (failures - 1))
    },
    reset() {
      failures = 0
    },
    get failures() {
      return failures
    },
  }
}
