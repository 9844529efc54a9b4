import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { namedSqliteError, openSqlite } from '../shared/sql/sqlite-file.ts'

export class DataFolderInUse extends Error {
  override name = 'DataFolderInUse'
}

/**
 * One gateway per data folder: its blocks, CARs and groups are local files
 * that two processes would corrupt between them. The lock is an exclusive
 * SQLite lock (an OS file lock) on `gateway.lock`, held for the process's
 * life, so the OS drops it when the process dies, even by SIGKILL: a crashed
 * gateway never leaves a stale lock behind. `gateway.pid` only names the
 * holder in the message.
 */
export interface DataFolderLock {
  release(): void
}

export function lockDataFolder(dir: string): DataFolderLock {
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const db = openSqlite(join(dir, 'gateway.lock'), { timeout: 0 })
  const pidFile = join(dir, 'gateway.pid')
  try {
    // The first write takes the exclusive lock; in EXCLUSIVE mode it is kept after the commit.
    db.exec('PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; CREATE TABLE IF NOT EXISTS holder (pid INTEGER); COMMIT')
  } catch (err) {
    if (db.isTransaction) db.exec('ROLLBACK')
    db.close()
    if ((namedSqliteError(err) as { code?: string }).code !== 'SQLITE_BUSY') throw err
    let holder = ''
    try {
      holder = ` (pid ${readFileSync(pidFile, 'utf8').trim()})`
    } catch {
      // No pid file: the holder is starting right now.
    }
    throw new DataFolderInUse(
      `another gateway is running on ${dir}${holder}: one gateway per data folder; stop it or give this one its own DATA_DIR`,
    )
  }
  writeFileSync(pidFile, `${process.pid}\n`, { mode: 0o600 })
  return {
    release() {
      rmSync(pidFile, { force: true })
      db.close()
    },
  }
}

/**
 * The lock, waiting up to `waitMs` for a previous gateway on the folder to
 * finish stopping (a restart, or a supervisor that was killed: its gateway
 * stops on its own a moment later). `onWait` is told once when it waits.
 */
export async function acquireDataFolder(dir: string, waitMs: number, onWait?: (message: string) => void): Promise<DataFolderLock> {
  const deadline = Date.now() + waitMs
  for (let told = false; ; told = true) {
    try {
      return lockDataFolder(dir)
    } catch (err) {
      if (!(err instanceof DataFolderInUse) || Date.now() >= deadline) throw err
      if (!told) onWait?.(`${err.message.split(':')[0]}; waiting up to ${Math.round(waitMs / 1000)} s for it to stop`)
      await sleep(200)
    }
  }
}
