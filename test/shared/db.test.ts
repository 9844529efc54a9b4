import { describe, expect, it } from 'vitest'
import { mkdtempSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDatabase, migrate } from '../../server/shared/db.ts'

describe('openDatabase', () => {
  it('creates an owner-only SQLite file in WAL mode', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'db-')), 'nested', 'meta.sqlite')
    const db = openDatabase(file)
    db.exec('CREATE TABLE t (x)')
    db.prepare('INSERT INTO t VALUES (1)').run()
    expect(db.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' })
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(statSync(file + '-wal').mode & 0o777).toBe(0o600)
    db.close()
  })

  it('applies each migration step once, in order, across reopenings', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'db-')), 'meta.sqlite')
    const steps = ['CREATE TABLE a (x)', 'ALTER TABLE a ADD COLUMN y']
    let db = openDatabase(file)
    migrate(db, 'm', steps.slice(0, 1))
    db.close()
    db = openDatabase(file)
    migrate(db, 'm', steps)
    migrate(db, 'm', steps)
    const columns = (db.prepare('PRAGMA table_info(a)').all() as { name: string }[]).map((c) => c.name)
    expect(columns).toEqual(['x', 'y'])
    db.close()
  })

  it('rolls back a failing step and leaves the version unchanged', () => {
    const db = openDatabase(':memory:')
    expect(() => migrate(db, 'm', ['CREATE TABLE a (x); CREATE TABLE a (y)'])).toThrow()
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'a'").get()).toBeUndefined()
    expect(db.prepare("SELECT version FROM schema_versions WHERE module = 'm'").get()).toBeUndefined()
  })
})
