import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe } from 'vitest'
import { openSql, type Dialect, type Sql, type StoreLocation } from '../../server/shared/sql/index.ts'
import { postgresUnavailable, startPostgres, type TestPostgres } from './postgres.ts'

/** Opens a fresh, empty store of the dialect under test (a new SQLite file, or a new PostgreSQL database). */
export type OpenStore = (schema?: StoreLocation['schema']) => Promise<Sql>

/** Where a fresh, empty store of the dialect under test lives, to open (and reopen) with openSql. */
export type NewStoreLocation = (schema?: StoreLocation['schema']) => StoreLocation

/**
 * Runs `suite` once per store: SQLite always, PostgreSQL where Debian's
 * `postgresql` is installed (a throw-away cluster for the file; skipped, and
 * the reason said in the suite's name, where it is not).
 */
export function describeEachStore(title: string, suite: (open: OpenStore, dialect: Dialect, location: NewStoreLocation) => void): void {
  describe(`${title} (SQLite)`, () => {
    let dir: string
    let n = 0
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'store-test-'))
    })
    afterAll(() => rmSync(dir, { recursive: true, force: true }))
    const location: NewStoreLocation = (schema = 'gateway') => ({ file: join(dir, `${schema}-${++n}.sqlite`), schema })
    suite(async (schema) => openSql(location(schema)), 'sqlite', location)
  })

  describe.skipIf(postgresUnavailable)(`${title} (PostgreSQL${postgresUnavailable ? `, skipped: ${postgresUnavailable}` : ''})`, () => {
    let pg: TestPostgres
    let n = 0
    beforeAll(async () => {
      pg = await startPostgres()
    })
    afterAll(() => pg?.stop())
    const location: NewStoreLocation = (schema = 'gateway') => ({ databaseUrl: pg.createDatabase(`store_${++n}`), file: '', schema })
    suite(async (schema) => openSql(location(schema)), 'postgres', location)
  })
}
