import { lockUntilCommit, stepFor, type Step } from './dialect.ts'
import { immediate, namedSqliteError, type Db } from './sqlite-file.ts'
import type { Dialect, Sql } from './types.ts'

/** One statement the runner needs answered: a read (its first row back) or a write. */
type Ask = { get: string; params: unknown[] } | { run: string; params: unknown[] } | { exec: string }

/**
 * The migration runner itself, for every store: what to ask, in order, and
 * what it makes of the answers. The drivers below only carry the statements
 * to a database, one asynchronously (the `Sql` layer), one synchronously (a
 * bare node:sqlite connection). Each module's version is one row of
 * schema_versions, whichever driver wrote it.
 */
function* migration(dialect: Dialect, module: string, steps: readonly Step[]): Generator<Ask, void, unknown> {
  yield { exec: 'CREATE TABLE IF NOT EXISTS schema_versions (module TEXT PRIMARY KEY, version INTEGER NOT NULL)' }
  const row = (yield { get: 'SELECT version FROM schema_versions WHERE module = ?', params: [module] }) as { version: number } | undefined
  for (let i = row?.version ?? 0; i < steps.length; i++) {
    yield { exec: stepFor(dialect, steps[i]) }
    yield {
      run: 'INSERT INTO schema_versions (module, version) VALUES (?, ?) ON CONFLICT (module) DO UPDATE SET version = excluded.version',
      params: [module, i + 1],
    }
  }
}

/**
 * Applies the steps of `module` not applied yet, in one transaction.
 * Steps are append-only: never edit one that has shipped, add a new one.
 * Replicas starting together take turns (an advisory lock on PostgreSQL).
 */
export async function migrateSql(sql: Sql, module: string, steps: readonly Step[]): Promise<void> {
  await sql.transaction(async (tx) => {
    // One lock for every module: creating schema_versions is racy on PostgreSQL even with IF NOT EXISTS.
    await lockUntilCommit(tx, 'schema_versions')
    const asks = migration(tx.dialect, module, steps)
    for (let next = asks.next(); !next.done;) {
      const ask = next.value
      const answer =
        'get' in ask ? await tx.get(ask.get, ask.params) : 'run' in ask ? await tx.run(ask.run, ask.params) : await tx.exec(ask.exec)
      next = asks.next(answer)
    }
  })
}

/**
 * migrateSql on a node:sqlite connection the store queries directly and
 * synchronously (the simulated chain, opened where nothing can await).
 * Same steps, same schema_versions, one `BEGIN IMMEDIATE` transaction.
 *
 * @example migrateSqlite(openDatabase(file), 'simnet.chain', STEPS)
 */
export function migrateSqlite(db: Db, module: string, steps: readonly Step[]): void {
  immediate(db, () => {
    const asks = migration('sqlite', module, steps)
    for (let next = asks.next(); !next.done;) {
      const ask = next.value
      let answer: unknown
      try {
        if ('get' in ask) answer = db.prepare(ask.get).get(...(ask.params as never[]))
        else if ('run' in ask) db.prepare(ask.run).run(...(ask.params as never[]))
        else db.exec(ask.exec)
      } catch (err) {
        throw namedSqliteError(err)
      }
      next = asks.next(answer)
    }
  })
}
