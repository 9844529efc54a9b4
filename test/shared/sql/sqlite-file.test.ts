import { describe, expect, it } from 'vitest'
import { mkdtempSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDatabase } from '../../../server/shared/sql/sqlite-file.ts'

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
})
