import { open, rm } from 'node:fs/promises'

/**
 * A little room the gateway holds on its disk for deletes: a DELETE is how a
 * person frees space, yet recording it is a write, which fails on a disk at
 * 0 bytes free (SQLite needs room for its journal). The room is a file of
 * `bytes` zeros; a DELETE that fails for want of space gives it up and is
 * tried once more. It is taken again once an upload is let in (so the disk
 * has room beyond what is kept for sealing), or at the next start.
 */
export interface RoomForDeletes {
  /** Takes the room again if it was given up; never fails (a full disk leaves it for later). */
  hold(): Promise<void>
  /** Gives the room up: true when it was held. */
  release(): Promise<boolean>
}

export function createRoomForDeletes(file: string, bytes = 1024 * 1024): RoomForDeletes {
  let held = false
  let taking: Promise<void> | undefined
  const take = async () => {
    const fd = await open(file, 'w')
    try {
      // Zeros written, not a sparse length: the blocks are really taken.
      const zeros = Buffer.alloc(Math.min(bytes, 1024 * 1024))
      for (let done = 0; done < bytes; done += zeros.length) await fd.write(zeros, 0, Math.min(zeros.length, bytes - done))
      await fd.sync()
      held = true
    } catch {
      await rm(file, { force: true }).catch(() => undefined)
    } finally {
      await fd.close()
    }
  }
  return {
    hold() {
      if (held) return Promise.resolve()
      taking ??= take()
        .catch(() => undefined)
        .finally(() => (taking = undefined))
      return taking
    },
    async release() {
      await taking
      if (!held) return false
      await rm(file, { force: true })
      held = false
      return true
    },
  }
}
