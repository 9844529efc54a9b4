/**
 * The one migration runner: the same history whether a store migrates through
 * the query layer (gateway, deal service, app surface) or on a bare
 * node:sqlite connection (the simulated chain), and databases made before
 * there was one runner open as they are.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { migrateSql, migrateSqlite, openDatabase, openSql, sqliteSql } from '../../../server/shared/sql/index.ts'
import { openSimChainStore } from '../../../server/simulation/simnet/chain-store.ts'
import { createNamespace } from '../../../server/gateway/namespace.ts'
import { migrateContent } from '../../../server/gateway/content/schema.ts'
import { migrateDeals } from '../../../server/gateway/deals/schema.ts'
import { migrateWebDav } from '../../../server/gateway/webdav/schema.ts'
import { migrateService, SERVICE_STEPS } from '../../../server/service/schema.ts'

const dir = mkdtempSync(join(tmpdir(), 'migrate-test-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let files = 0
const newFile = () => join(dir, `${++files}.sqlite`)

/** A SQLite file holding what `existing/<name>.sql` dumped: a database the code before one runner made. */
function existing(name: 'chain' | 'gateway' | 'service'): string {
  const file = newFile()
  const db = openDatabase(file)
  db.exec(readFileSync(join(import.meta.dirname, 'existing', `${name}.sql`), 'utf8'))
  db.close()
  return file
}

const versions = (file: string) => {
  const db = openDatabase(file)
  try {
    return Object.fromEntries(
      (db.prepare('SELECT module, version FROM schema_versions ORDER BY module').all() as { module: string; version: number }[]).map(
        (r) => [r.module, r.version],
      ),
    )
  } finally {
    db.close()
  }
}

describe('migrateSqlite (a bare node:sqlite connection)', () => {
  it('applies each step once, in order, across reopenings', () => {
    const file = newFile()
    const steps = ['CREATE TABLE a (x)', 'ALTER TABLE a ADD COLUMN y']
    let db = openDatabase(file)
    migrateSqlite(db, 'm', steps.slice(0, 1))
    db.close()
    db = openDatabase(file)
    migrateSqlite(db, 'm', steps)
    migrateSqlite(db, 'm', steps)
    expect((db.prepare('PRAGMA table_info(a)').all() as { name: string }[]).map((c) => c.name)).toEqual(['x', 'y'])
    db.close()
    expect(versions(file)).toEqual({ m: 2 })
  })

  it('rolls back a failing step and leaves the version unchanged', () => {
    const db = openDatabase(':memory:')
    migrateSqlite(db, 'm', ['CREATE TABLE a (x)'])
    expect(() => migrateSqlite(db, 'm', ['CREATE TABLE a (x)', 'CREATE TABLE b (x); CREATE TABLE b (y)'])).toThrow(
      expect.objectContaining({ code: 'SQLITE_ERROR' }),
    )
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'b'").get()).toBeUndefined()
    expect(db.prepare("SELECT version FROM schema_versions WHERE module = 'm'").get()).toEqual({ version: 1 })
    db.close()
  })

  it('keeps the same history as migrateSql: one runner, whichever way a store reaches it', async () => {
    const file = newFile()
    const steps = ['CREATE TABLE a (x INTEGER)', 'CREATE TABLE b (x INTEGER)']
    const db = openDatabase(file)
    migrateSqlite(db, 'm', steps.slice(0, 1))
    const sql = sqliteSql(db)
    await migrateSql(sql, 'm', steps)
    await sql.close()
    expect(versions(file)).toEqual({ m: 2 })
    const again = openDatabase(file)
    migrateSqlite(again, 'm', steps)
    again.close()
    expect(versions(file)).toEqual({ m: 2 })
  })
})

describe('a database made before there was one migration runner', () => {
  it('simulated chain: opens with its saved clock and deals, and takes a step added later', () => {
    const file = existing('chain')
    const store = openSimChainStore(file)
    // The saved clock (genesis 1733616000, 3 s epochs: speed 10) comes back as it was, not re-anchored.
    expect(store.clock(1704067200, 10, Date.UTC(2026, 0, 1))).toEqual({ name: 'simnet', genesis: 1733616000, epochSeconds: 3 })
    expect(store.deals().map((d) => [d.dealId, d.proposedEpoch, d.proposal.Provider])).toEqual([
      [1_000_001, 42, 'f01000'],
      [1_000_002, 43, 'f01000'],
    ])
    store.close()
    expect(versions(file)).toEqual({ 'simnet.chain': 1 })

    // Version 1 was written by the old runner; the new one goes on from it (the first step is not run again).
    const db = openDatabase(file)
    migrateSqlite(db, 'simnet.chain', ['this step shipped already and is not run again', 'CREATE TABLE simnet_later (x INTEGER)'])
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'simnet_later'").get()).toEqual({ name: 'simnet_later' })
    db.close()
    expect(versions(file)).toEqual({ 'simnet.chain': 2 })
  })

  it("gateway: every module is at its version already but the deals', which gain the storage route's columns and a table of the PDP prices seen, and the content's, whose groups gain their liveness and compaction marks and whether they hold files; its records stay", async () => {
    const file = existing('gateway')
    const before = versions(file)
    expect(before).toEqual({ 'gateway.content': 1, 'gateway.deals': 3, 'gateway.namespace': 3, 'gateway.webdav': 1 })
    const sql = await openSql({ file, schema: 'gateway' })
    const namespace = await createNamespace(sql)
    await migrateContent(sql)
    await migrateDeals(sql)
    await migrateWebDav(sql)
    expect((await namespace.get('/docs'))?.kind).toBe('dir')
    // A deal made before there were routes is a deal-market deal.
    await sql.run(
      `INSERT INTO group_deals (group_id, provider, piece_cid, state, start_epoch, end_epoch, created_ms, updated_ms) VALUES (1, 'f01000', 'baga', 'active', 1, 2, 0, 0)`,
    )
    expect(await sql.get('SELECT route, data_set_id, first_proof_due_epoch FROM group_deals')).toEqual({
      route: 'market',
      data_set_id: null,
      first_proof_due_epoch: null,
    })
    // No PDP price has been seen yet.
    expect(await sql.all('SELECT * FROM pdp_rates')).toEqual([])
    // Groups are live until a pass looks; groups from before hold files as far as closing goes, and close when idle as they did.
    await sql.run(`INSERT INTO content_groups (state, created_ms, updated_ms) VALUES ('offloaded', 0, 0)`)
    expect(await sql.get('SELECT dead_since_ms, retired_ms, holds_files, sparse_since_ms, compacting_ms FROM content_groups')).toEqual({
      dead_since_ms: null,
      retired_ms: null,
      holds_files: 1,
      sparse_since_ms: null,
      compacting_ms: null,
    })
    await sql.close()
    expect(versions(file)).toEqual({ ...before, 'gateway.content': 4, 'gateway.deals': 10 })
  })

  it('deal service: at its version already, its tables as they were', async () => {
    const file = existing('service')
    expect(versions(file)).toEqual({ service: SERVICE_STEPS.length })
    const sql = await openSql({ file, schema: 'service' })
    await migrateService(sql)
    expect(await sql.column('SELECT next_deal_id FROM deal_scan')).toEqual([])
    await sql.close()
    expect(versions(file)).toEqual({ service: SERVICE_STEPS.length })
  })
})
