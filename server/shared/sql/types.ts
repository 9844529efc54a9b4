export type Dialect = 'sqlite' | 'postgres'

export interface RunResult {
  /** Rows inserted, updated or deleted. */
  changes: number
}

/**
 * One query layer for both stores: SQL written once, with `?` placeholders,
 * in the subset SQLite and PostgreSQL share (INSERT … ON CONFLICT,
 * RETURNING, row values, integer booleans). Each part gets its own: a SQLite
 * file, or its own schema in a PostgreSQL database.
 */
export interface Sql {
  readonly dialect: Dialect
  all<T = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<T[]>
  /** The first column of every row: no row objects, for long lists of one value. */
  column<T = unknown>(text: string, params?: readonly unknown[]): Promise<T[]>
  /** The first row, or undefined. */
  get<T = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<T | undefined>
  run(text: string, params?: readonly unknown[]): Promise<RunResult>
  /** Runs statements without parameters, several at once (migrations). */
  exec(text: string): Promise<void>
  /**
   * Runs `fn` in one transaction: committed when it resolves, rolled back when
   * it throws. Inside, use the `tx` handed in; the outer handle waits until
   * the transaction is over, so nothing else runs inside it by accident.
   */
  transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T>
  /**
   * Runs `fn` unless another process on the same database is running under
   * `name`, and then returns undefined at once (replicas sharing a periodic
   * job). PostgreSQL: a session advisory lock on a connection of its own.
   * SQLite: always runs (one process owns the file).
   */
  exclusively<T>(name: string, fn: () => Promise<T>): Promise<T | undefined>
  close(): Promise<void>
}

export class SqlError extends Error {
  override name = 'SqlError'
}

/** A unique, foreign-key or check constraint refused the write (SQLITE_CONSTRAINT_*, PostgreSQL class 23). */
export function isConstraintViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' && (code.startsWith('SQLITE_CONSTRAINT') || /^23[0-9A-Z]{3}$/.test(code))
}
