import { join } from 'node:path'
import { openSql, type Sql } from '../shared/sql/index.ts'

/**
 * The gateway's records: PostgreSQL's `gateway` schema with DATABASE_URL,
 * else `<dataDir>/gateway.sqlite` as always (same tables, same
 * schema_versions, so an existing file opens and migrates as before).
 */
export function openGatewaySql(config: { dataDir: string; databaseUrl?: string }): Promise<Sql> {
  return openSql({ databaseUrl: config.databaseUrl, file: join(config.dataDir, 'gateway.sqlite'), schema: 'gateway' })
}

/** Runs one call at a time, in order: in-memory state that spans awaits stays consistent. */
export function createSerial() {
  let tail: Promise<unknown> = Promise.resolve()
  return <T>(fn: () => Promise<T>): Promise<T> => {
    const run = tail.then(fn, fn)
    tail = run.catch(() => {})
    return run
  }
}
