/**
 * Records kept between requests: one computation per change for many
 * clients polling the same record, never an answer older than what was
 * written since, nor older than the freshness limit.
 */
import { describe, expect, it } from 'vitest'
import { openSql } from '../../server/shared/sql/index.ts'
import { countingWrites, createRecordCache } from '../../server/gateway/record-cache.ts'

async function setup(freshMs = 1_000, maxEntries = 10) {
  const { sql, writes } = countingWrites(await openSql({ file: ':memory:', schema: 'gateway' }))
  await sql.exec('CREATE TABLE groups (id INTEGER PRIMARY KEY, state TEXT NOT NULL)')
  await sql.run("INSERT INTO groups (id, state) VALUES (1, 'open')")
  let clock = 0
  let made = 0
  const cache = createRecordCache({ writes, freshMs, maxEntries, now: () => clock })
  const record = (key = 'v/docs') =>
    cache.get(key, async () => {
      made++
      const row = await sql.get<{ state: string }>('SELECT state FROM groups WHERE id = 1')
      return JSON.stringify({ key, state: row?.state })
    })
  return { sql, record, made: () => made, tick: (ms: number) => (clock += ms) }
}

describe('record cache', () => {
  it('answers many polls with one computation, and the next one sees a write at once', async () => {
    const s = await setup()
    expect(await s.record()).toContain('"open"')
    await s.record()
    await s.record()
    expect(s.made()).toBe(1)
    await s.sql.run("UPDATE groups SET state = 'sealed' WHERE id = 1")
    expect(await s.record()).toContain('"sealed"')
    expect(s.made()).toBe(2)
  })

  it('sees a committed transaction, and reads inside a transaction are no writes', async () => {
    const s = await setup()
    await s.record()
    await s.sql.transaction(async (tx) => {
      await tx.get('SELECT state FROM groups WHERE id = 1')
      await tx.run("UPDATE groups SET state = 'offloaded' WHERE id = 1")
    })
    expect(await s.record()).toContain('"offloaded"')
    await s.sql.all('SELECT * FROM groups')
    await s.record()
    expect(s.made()).toBe(2)
  })

  it('makes a record again once it is older than the freshness limit', async () => {
    const s = await setup(1_000)
    await s.record()
    s.tick(999)
    await s.record()
    expect(s.made()).toBe(1)
    s.tick(1)
    await s.record()
    expect(s.made()).toBe(2)
  })

  it('makes a record once for requests at the same time, and keeps none made across a write', async () => {
    const s = await setup()
    const [a, b, c] = await Promise.all([s.record(), s.record(), s.record()])
    expect(s.made()).toBe(1)
    expect(new Set([a, b, c]).size).toBe(1)
    // A write lands while the record is being made: it may have read before it, so it is used once and not kept.
    const during = s.record('v/other')
    await s.sql.run("UPDATE groups SET state = 'full' WHERE id = 1")
    await during
    expect(await s.record('v/other')).toContain('"full"')
    expect(s.made()).toBe(3)
  })

  it('keeps no failure, and at most its number of records', async () => {
    const s = await setup(1_000, 2)
    const cache = createRecordCache({ writes: () => 0, freshMs: 1_000, maxEntries: 2 })
    let calls = 0
    const failing = () =>
      cache.get('x', async () => {
        calls++
        throw new Error('not found')
      })
    await expect(failing()).rejects.toThrow('not found')
    await expect(failing()).rejects.toThrow('not found')
    expect(calls).toBe(2)
    await s.record('a')
    await s.record('b')
    await s.record('c')
    await s.record('c')
    await s.record('a')
    // 'a' was pushed out by 'c'.
    expect(s.made()).toBe(4)
  })
})
