import { DatabaseSync, type DatabaseSyncOptions } from 'node:sqlite'
import { chmodSync, mkdirSync } from 'node:fs'
import { dirname } from 'node:path'

export type Db = DatabaseSync

/** SQLite's primary result codes that callers tell apart (sqlite3.h), by the name better known than the number. */
const RESULT_NAMES: Record<number, string> = {
  5: 'SQLITE_BUSY',
  6: 'SQLITE_LOCKED',
  10: 'SQLITE_IOERR',
  13: 'SQLITE_FULL',
  19: 'SQLITE_CONSTRAINT',
}

/**
 * node:sqlite reports every failure as `ERR_SQLITE_ERROR` with SQLite's
 * extended result number in `errcode`; this names it (`SQLITE_BUSY`,
 * `SQLITE_FULL`, `SQLITE_CONSTRAINT`…) in `code`, which is what the rest of
 * the code (and PostgreSQL's driver, with its own codes) reads.
 */
export function namedSqliteError(err: unknown): unknown {
  const e = err as { code?: unknown; errcode?: unknown } | null
  if (e && e.code === 'ERR_SQLITE_ERROR' && typeof e.errcode === 'number') e.code = RESULT_NAMES[e.errcode & 0xff] ?? 'SQLITE_ERROR'
  return err
}

/** Opens a SQLite file with node:sqlite, errors named as `namedSqliteError` says. */
export function openSqlite(file: string, options: DatabaseSyncOptions = {}): Db {
  try {
    return new DatabaseSync(file, options)
  } catch (err) {
    throw namedSqliteError(err)
  }
}

/** Runs `fn` in one `BEGIN IMMEDIATE` transaction: committed when it returns, rolled back when it throws. */
export function immediate<T>(db: Db, fn: () => T): T {
  try {
    db.exec('BEGIN IMMEDIATE')
  } catch (err) {
    throw namedSqliteError(err)
  }
  try {
    const result = fn()
    db.exec('COMMIT')
    return result
  } catch (err) {
    if (db.isTransaction) db.exec('ROLLBACK')
    throw namedSqliteError(err)
  }
}

/** Opens (or creates) a SQLite file in WAL mode; `:memory:` works for tests. */
export function openDatabase(file: string): Db {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true, mode: 0o700 })
  const db = openSqlite(file, { timeout: 5_000 })
  // Metadata includes password and key hashes: owner only. SQLite gives the
  // -wal and -shm files the database file's mode.
  if (file !== ':memory:') chmodSync(file, 0o600)
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON')
  return db
}
