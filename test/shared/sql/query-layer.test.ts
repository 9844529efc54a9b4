/**
 * The one query layer, the same tests on both stores: SQLite always,
 * PostgreSQL where it is installed (a throw-away cluster; skipped, and said,
 * where it is not).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ddlFor, isConstraintViolation, jsonList, migrateSql, stepFor, type Sql } from '../../../server/shared/sql/index.ts'
import { toPostgresText } from '../../../server/shared/sql/postgres.ts'
import { describeEachStore } from '../../helpers/stores.ts'

const STEPS = [
  `CREATE TABLE items (
     id INTEGER PRIMARY KEY,
     name TEXT NOT NULL UNIQUE,
     size INTEGER NOT NULL DEFAULT 0,
     data BLOB,
     created_ms INTEGER NOT NULL
   );`,
  `CREATE TABLE tags (item_id INTEGER NOT NULL, tag TEXT NOT NULL, PRIMARY KEY (item_id, tag)) WITHOUT ROWID;`,
]

function storeSuite(name: string, open: () => Promise<Sql>) {
  describe(name, () => {
    let sql: Sql
    beforeAll(async () => {
      sql = await open()
      await migrateSql(sql, 'test.items', STEPS)
    })
    afterAll(async () => {
      await sql?.close()
    })

    it('migrates once: running the steps again changes nothing', async () => {
      await migrateSql(sql, 'test.items', STEPS)
      expect(await sql.get('SELECT version FROM schema_versions WHERE module = ?', ['test.items'])).toEqual({ version: 2 })
    })

    it('inserts with RETURNING, reads 64-bit integers as numbers and bytes as bytes', async () => {
      const at = Date.UTC(2026, 10, 23, 12, 0, 0, 123)
      const row = await sql.get<{ id: number }>('INSERT INTO items (name, size, data, created_ms) VALUES (?, ?, ?, ?) RETURNING id', [
        'a',
        2 ** 40,
        Buffer.from([1, 2, 3]),
        at,
      ])
      expect(typeof row!.id).toBe('number')
      const back = await sql.get<{ size: number; data: Uint8Array; created_ms: number }>(
        'SELECT size, data, created_ms FROM items WHERE id = ?',
        [row!.id],
      )
      expect(back!.size).toBe(2 ** 40)
      expect(back!.created_ms).toBe(at)
      expect(Buffer.from(back!.data)).toEqual(Buffer.from([1, 2, 3]))
    })

    it('upserts with ON CONFLICT and counts changes', async () => {
      const up = (size: number) =>
        sql.run('INSERT INTO items (name, size, created_ms) VALUES (?, ?, 0) ON CONFLICT (name) DO UPDATE SET size = excluded.size', [
          'b',
          size,
        ])
      expect((await up(1)).changes).toBe(1)
      expect((await up(2)).changes).toBe(1)
      expect(await sql.get('SELECT size FROM items WHERE name = ?', ['b'])).toEqual({ size: 2 })
      expect((await sql.run('UPDATE items SET size = size + 1 WHERE name = ?', ['nobody'])).changes).toBe(0)
    })

    it('pages with row values in both orders', async () => {
      for (let i = 0; i < 5; i++) await sql.run('INSERT INTO items (name, size, created_ms) VALUES (?, ?, ?)', [`p${i}`, i % 2, 100 + i])
      const page = await sql.all<{ name: string }>(
        "SELECT name FROM items WHERE name LIKE 'p%' AND (size, name) > (?, ?) ORDER BY size, name LIMIT 3",
        [0, 'p2'],
      )
      expect(page.map((r) => r.name)).toEqual(['p4', 'p1', 'p3'])
    })

    it('commits a transaction that resolves and rolls back one that throws', async () => {
      await sql.transaction(async (tx) => {
        await tx.run('INSERT INTO items (name, created_ms) VALUES (?, 0)', ['kept'])
      })
      await expect(
        sql.transaction(async (tx) => {
          await tx.run('INSERT INTO items (name, created_ms) VALUES (?, 0)', ['dropped'])
          throw new Error('no')
        }),
      ).rejects.toThrow('no')
      expect(await sql.get('SELECT name FROM items WHERE name = ?', ['kept'])).toEqual({ name: 'kept' })
      expect(await sql.get('SELECT name FROM items WHERE name = ?', ['dropped'])).toBeUndefined()
    })

    it('keeps other callers out of a transaction while its body awaits', async () => {
      let release!: () => void
      const gate = new Promise<void>((r) => (release = r))
      const tx = sql.transaction(async (t) => {
        await t.run('INSERT INTO items (name, created_ms) VALUES (?, 0)', ['in-tx'])
        await gate
        throw new Error('roll back')
      })
      // Issued while the transaction is open: must not see (or join) its uncommitted row.
      const outside = sql.get('SELECT name FROM items WHERE name = ?', ['in-tx'])
      await new Promise((r) => setTimeout(r, 20))
      release()
      await expect(tx).rejects.toThrow('roll back')
      expect(await outside).toBeUndefined()
    })

    it('makes concurrent read-modify-write transactions atomic', async () => {
      await sql.run('INSERT INTO items (name, size, created_ms) VALUES (?, 0, 0)', ['counter'])
      await Promise.all(
        Array.from({ length: 20 }, () =>
          sql.transaction(async (tx) => {
            // Row lock on PostgreSQL; SQLite runs one transaction at a time.
            const row = await tx.get<{ size: number }>(
              `SELECT size FROM items WHERE name = ?${tx.dialect === 'postgres' ? ' FOR UPDATE' : ''}`,
              ['counter'],
            )
            await tx.run('UPDATE items SET size = ? WHERE name = ?', [row!.size + 1, 'counter'])
          }),
        ),
      )
      expect(await sql.get('SELECT size FROM items WHERE name = ?', ['counter'])).toEqual({ size: 20 })
    })

    it('tells a constraint violation from other errors', async () => {
      await sql.run('INSERT INTO items (name, created_ms) VALUES (?, 0)', ['once'])
      expect(
        isConstraintViolation(await sql.run('INSERT INTO items (name, created_ms) VALUES (?, 0)', ['once']).catch((e: unknown) => e)),
      ).toBe(true)
      expect(isConstraintViolation(await sql.run('INSERT INTO items (name) VALUES (?)', ['no-created']).catch((e: unknown) => e))).toBe(
        true,
      )
      expect(isConstraintViolation(await sql.run('INSERT INTO nowhere (name) VALUES (?)', ['x']).catch((e: unknown) => e))).toBe(false)
    })

    it('runs one caller at a time under a name on PostgreSQL (others skip), every caller on SQLite', async () => {
      let release!: () => void
      const gate = new Promise<void>((r) => (release = r))
      let entered!: () => void
      const holding = new Promise<void>((r) => (entered = r))
      const first = sql.exclusively('nightly', async () => (entered(), await gate, 'first'))
      await holding
      expect(await sql.exclusively('nightly', async () => 'second')).toBe(sql.dialect === 'postgres' ? undefined : 'second')
      expect(await sql.exclusively('hourly', async () => 'other name')).toBe('other name')
      release()
      expect(await first).toBe('first')
      expect(await sql.exclusively('nightly', async () => 'after')).toBe('after')
    })
  })
}

describe('query layer helpers', () => {
  it('turns ? into numbered placeholders, not inside quoted strings', () => {
    expect(toPostgresText("SELECT ? AS a, '?' AS q, 'it''s ?' AS r WHERE x = ?")).toBe(
      "SELECT $1 AS a, '?' AS q, 'it''s ?' AS r WHERE x = $2",
    )
  })
  it('writes PostgreSQL DDL from SQLite DDL', () => {
    expect(ddlFor('postgres', STEPS[0])).toContain('id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY')
    expect(ddlFor('postgres', STEPS[0])).toContain('data BYTEA')
    expect(ddlFor('postgres', STEPS[1])).not.toContain('WITHOUT ROWID')
    expect(ddlFor('sqlite', STEPS[1])).toBe(STEPS[1])
  })
  it('takes a step shipped for SQLite alone as it is, and its PostgreSQL twin through ddlFor', () => {
    const step = { sqlite: 'CREATE TABLE t (x INTEGER, "offset" INTEGER)', postgres: 'CREATE TABLE t (x INTEGER, "offset" BLOB)' }
    expect(stepFor('sqlite', step)).toBe(step.sqlite)
    expect(stepFor('postgres', step)).toBe('CREATE TABLE t (x BIGINT, "offset" BYTEA)')
    expect(stepFor('postgres', STEPS[1])).toBe(ddlFor('postgres', STEPS[1]))
  })
  it('reads a list from one JSON parameter, as text or as 64-bit integers', () => {
    expect(jsonList('sqlite', 'integer')).toBe('SELECT value FROM json_each(?)')
    expect(jsonList('postgres')).toBe('SELECT json_array_elements_text(CAST(? AS json))')
    expect(jsonList('postgres', 'integer')).toContain('AS BIGINT')
  })
})

describeEachStore('the query layer', ({ open }) => storeSuite('on a fresh store', open))
