/**
 * The one way a test picks its database. Nothing else in test/ starts
 * PostgreSQL, reads a store switch from the environment or checks whether
 * PostgreSQL can run:
 *
 * - `describeEachStore(title, suite)`: the suite once on SQLite and once on
 *   PostgreSQL (`{ only: 'postgres' }` for what exists only there: replicas
 *   sharing a database, the gateway's database lock).
 * - `testDatabaseUrl()`: for the harnesses whose tests run once, on the
 *   default store (HTTP, WebDAV and deal-engine tests): undefined, so the
 *   part keeps its SQLite file; a fresh PostgreSQL database with
 *   `TEST_STORE=postgres` (`TEST_STORE=postgres npx vitest run test/gateway`).
 *
 * PostgreSQL is a throw-away cluster from Debian's `postgresql`
 * (scripts/lib/postgres.ts); where it cannot run, its suites are skipped and say why
 * in their names, and TEST_STORE=postgres fails loudly. Import this module
 * statically: it registers the hook that stops the cluster of testDatabaseUrl.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe } from 'vitest'
import { openSql, type Dialect, type Sql, type StoreLocation } from '../../server/shared/sql/index.ts'
import { postgresUnavailable, startPostgres, type TestPostgres } from '../../scripts/lib/postgres.ts'

/** The store of the tests that run once: `TEST_STORE=postgres`, else SQLite. */
export const TEST_STORE: Dialect = process.env.TEST_STORE === 'postgres' ? 'postgres' : 'sqlite'

/** What a suite of describeEachStore is handed: fresh, empty stores of its dialect. */
export interface StoreUnderTest {
  dialect: Dialect
  /** Opens a fresh, empty store (a new SQLite file, or a new PostgreSQL database). */
  open(schema?: StoreLocation['schema']): Promise<Sql>
  /** Where a fresh, empty store lives, to open (and reopen) with openSql. */
  location(schema?: StoreLocation['schema']): StoreLocation
  /** A fresh PostgreSQL database for a whole part (its DATABASE_URL); undefined on SQLite, where each part keeps its file. */
  databaseUrl(name?: string): string | undefined
}

/**
 * Runs `suite` once per store: SQLite, then PostgreSQL where Debian's
 * `postgresql` is installed (a throw-away cluster for the suite; skipped, and
 * the reason said in its name, where it is not).
 *
 * @example describeEachStore('bridge state', ({ open }) => { it('…', async () => { const sql = await open('bridge') }) })
 */
export function describeEachStore(title: string, suite: (store: StoreUnderTest) => void, options: { only?: Dialect } = {}): void {
  if (options.only !== 'postgres') {
    describe(`${title} (SQLite)`, () => {
      let dir: string
      let n = 0
      beforeAll(() => {
        dir = mkdtempSync(join(tmpdir(), 'store-test-'))
      })
      afterAll(() => rmSync(dir, { recursive: true, force: true }))
      const location = (schema: StoreLocation['schema'] = 'gateway'): StoreLocation => ({
        file: join(dir, `${schema}-${++n}.sqlite`),
        schema,
      })
      suite({ dialect: 'sqlite', open: (schema) => openSql(location(schema)), location, databaseUrl: () => undefined })
    })
  }
  if (options.only === 'sqlite') return
  describe.skipIf(postgresUnavailable)(`${title} (PostgreSQL${postgresUnavailable ? `, skipped: ${postgresUnavailable}` : ''})`, () => {
    let pg: TestPostgres
    let n = 0
    beforeAll(async () => {
      pg = await startPostgres()
    })
    afterAll(() => pg?.stop())
    const databaseUrl = (name = 'store') => pg.createDatabase(`${name}_${++n}`)
    const location = (schema: StoreLocation['schema'] = 'gateway'): StoreLocation => ({ databaseUrl: databaseUrl(), file: '', schema })
    suite({ dialect: 'postgres', open: (schema) => openSql(location(schema)), location, databaseUrl })
  })
}

// Under TEST_STORE=postgres: one cluster for the test file, started at the first database asked for
// and stopped after the file's last test (a vitest worker ends without the process's exit event).
let cluster: Promise<TestPostgres> | undefined
let databases = 0
afterAll(async () => {
  const started = cluster
  cluster = undefined
  ;(await started?.catch(() => undefined))?.stop()
})

/**
 * The DATABASE_URL of a part a test starts on the default store: undefined
 * (its SQLite file), or under TEST_STORE=postgres a fresh database on a
 * cluster that lives as long as the test file.
 */
export async function testDatabaseUrl(name = 'part'): Promise<string | undefined> {
  if (TEST_STORE !== 'postgres') return undefined
  cluster ??= startPostgres()
  return (await cluster).createDatabase(`${name}_${process.pid}_${++databases}`)
}
