import Database from 'better-sqlite3'
import { chmodSync, mkdirSync } from 'node:fs'
import { dirname } from 'node:path'

export type Db = Database.Database

/** Opens (or creates) a SQLite file in WAL mode; `:memory:` works for tests. */
export function openDatabase(file: string): Db {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true, mode: 0o700 })
  const db = new Database(file)
  // Metadata includes password and key hashes: owner only. SQLite gives the
  // -wal and -shm files the database file's mode.
  if (file !== ':memory:') chmodSync(file, 0o600)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.pragma('foreign_keys = ON')
  db.pragma('busy_timeout = 5000')
  db.exec('CREATE TABLE IF NOT EXISTS schema_versions (module TEXT PRIMARY KEY, version INTEGER NOT NULL)')
  return db
}

/**
 * Applies the not-yet-applied steps of one module's schema, each in a transaction.
 * Steps are append-only: never edit a step that has shipped, add a new one.
 */
export function migrate(db: Db, module: string, steps: string[]): void {
  const row = db.prepare('SELECT version FROM schema_versions WHERE module = ?').get(module) as { version: number } | undefined
  const from = row?.version ?? 0
  for (let i = from; i < steps.length; i++) {
    db.transaction(() => {
      db.exec(steps[i])
      db.prepare('INSERT INTO schema_versions (module, version) VALUES (?, ?) ON CONFLICT(module) DO UPDATE SET version = excluded.version').run(module, i + 1)
    })()
  }
}
