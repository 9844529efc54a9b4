import { join } from 'node:path'
import { openSql, type Dialect, type Sql } from '../shared/sql/index.ts'

/**
 * The gateway's records: PostgreSQL's `gateway` schema with DATABASE_URL,
 * else `<dataDir>/gateway.sqlite` as always (same tables, same
 * schema_versions, so an existing file opens and migrates as before).
 */
export function openGatewaySql(config: { dataDir: string; databaseUrl?: string }): Promise<Sql> {
  return openSql({ databaseUrl: config.databaseUrl, file: join(config.dataDir, 'gateway.sqlite'), schema: 'gateway' })
}

/**
 * A migration step. Steps that shipped for SQLite alone (rowid, randomblob,
 * a column named `offset`) keep their SQLite text byte for byte and get a
 * PostgreSQL twin that ends in the same tables.
 */
export type Step = string | { sqlite: string; postgres: string }

export const stepsFor = (dialect: Dialect, steps: readonly Step[]): string[] => steps.map((s) => (typeof s === 'string' ? s : s[dialect]))

/**
 * A sub-query over a list passed as one JSON parameter (`x IN (${jsonList(d)})`),
 * so that one statement text, prepared once, serves lists of any length.
 */
export const jsonList = (dialect: Dialect, type: 'text' | 'integer' = 'text'): string =>
  dialect === 'sqlite'
    ? 'SELECT value FROM json_each(?)'
    : type === 'text'
      ? 'SELECT json_array_elements_text(CAST(? AS json))'
      : 'SELECT CAST(json_array_elements_text(CAST(? AS json)) AS BIGINT)'

/** Runs one call at a time, in order: in-memory state that spans awaits stays consistent. */
export function createSerial() {
  let tail: Promise<unknown> = Promise.resolve()
  return <T>(fn: () => Promise<T>): Promise<T> => {
    const run = tail.then(fn, fn)
    tail = run.catch(() => {})
    return run
  }
}
