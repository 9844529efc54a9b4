import { spawnSync } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface SmallDisk {
  /** The mount point: a real, small filesystem that can be filled up. */
  dir: string
  /** Fills the disk until fewer than `leaveBytes` are free (0: until writes fail with ENOSPC). */
  fill(leaveBytes?: number): void
  /** Frees what `fill` took. */
  free(): void
  unmount(): void
}

/**
 * Why a tmpfs cannot be mounted here (not root, no CAP_SYS_ADMIN), or
 * undefined when it can: tests that need a really full disk skip with it.
 */
export const tmpfsUnavailable: string | undefined = (() => {
  const probe = mkdtempSync(join(tmpdir(), 'tmpfs-probe-'))
  try {
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe], { encoding: 'utf8' })
    if (mounted.status !== 0) return `cannot mount a tmpfs here (${(mounted.stderr || mounted.error?.message || 'mount failed').trim()})`
    spawnSync('umount', [probe])
    return undefined
  } finally {
    rmSync(probe, { recursive: true, force: true })
  }
})()

/** Mounts a tmpfs of `sizeBytes` on a new temp folder (root only: see `tmpfsUnavailable`). */
export function mountSmallDisk(sizeBytes: number): SmallDisk {
  const dir = mkdtempSync(join(tmpdir(), 'small-disk-'))
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeBytes},mode=0700`, 'tmpfs', dir], { encoding: 'utf8' })
  if (mounted.status !== 0) throw new Error(`mount failed: ${mounted.stderr}`)
  const filler = join(dir, 'filler')
  return {
    dir,
    fill(leaveBytes = 0) {
      const fd = openSync(filler, 'a')
      const chunk = Buffer.alloc(64 * 1024)
      try {
        for (;;) {
          const s = statfsSync(dir)
          const room = s.bavail * s.bsize - leaveBytes
          if (room <= 0) break
          writeSync(fd, chunk, 0, Math.min(chunk.length, room))
        }
      } catch (err) {
        if ((err as { code?: string }).code !== 'ENOSPC') throw err
      } finally {
        closeSync(fd)
      }
    },
    free() {
      rmSync(filler, { force: true })
    },
    unmount() {
      spawnSync('umount', ['-l', dir])
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
