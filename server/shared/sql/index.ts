import { openDatabase } from './sqlite-file.ts'
import { postgresSql } from './postgres.ts'
import { sqliteSql } from './sqlite.ts'
import type { Sql } from './types.ts'

export type { Dialect, RunResult, Sql } from './types.ts'
export { isConstraintViolation } from './types.ts'
export { migrateSql, migrateSqlite } from './migrate.ts'
export { immediate, namedSqliteError, openDatabase, openSqlite, type Db } from './sqlite-file.ts'
export { ddlFor, jsonList, lockUntilCommit, stepFor, type Step } from './dialect.ts'
export { sqliteSql } from './sqlite.ts'
export { watchWrites } from './write-hooks.ts'
export { advisoryLockKey, postgresSql } from './postgres.ts'

export interface StoreLocation {
  /** Set: PostgreSQL (`postgres://…`), the part in its own schema. Unset: the SQLite file. */
  databaseUrl?: string
  /** The part's SQLite file (WAL), e.g. `<DATA_DIR>/gateway/gateway.sqlite`. */
  file: string
  /** The part's PostgreSQL schema. */
  schema: 'gateway' | 'bridge' | 'service'
}

/** Opens a part's store: PostgreSQL when DATABASE_URL is set, its SQLite file otherwise. */
export async function openSql(where: StoreLocation): Promise<Sql> {
  if (where.databaseUrl) return postgresSql({ url: where.databaseUrl, schema: where.schema })
  return sqliteSql(openDatabase(where.file))
}
