import pg from 'pg'
import type { RunResult, Sql } from './types.ts'

export interface PostgresOptions {
  /** `postgres://user:password@host:port/database` */
  url: string
  /** Each part keeps its tables in a schema of its own (`gateway`, `bridge`, `service`). */
  schema: string
  /** Connections kept open (default 10). */
  poolSize?: number
}

const placeholders = new Map<string, string>()

/** A stable 31-bit number per name, for PostgreSQL's advisory locks. */
export const advisoryLockKey = (name: string) => [...name].reduce((h, c) => (Math.imul(h, 31) + c.charCodeAt(0)) | 0, 7) & 0x7fffffff

/** `?` → `$1, $2, …`, leaving quoted strings alone (our SQL is written once, with `?`). */
export function toPostgresText(text: string): string {
  let converted = placeholders.get(text)
  if (converted === undefined) {
    let n = 0
    let quoted = false
    let out = ''
    for (const ch of text) {
      if (ch === "'") quoted = !quoted
      out += ch === '?' && !quoted ? `$${++n}` : ch
    }
    converted = out
    placeholders.set(text, out)
  }
  return converted
}

// 64-bit integers come back as numbers (ids, byte counts and milliseconds stay far below 2^53).
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === pg.types.builtins.INT8) return (value: string) => Number(value)
    return pg.types.getTypeParser(oid, format)
  },
}

/**
 * The query layer over a PostgreSQL pool. The part's schema is created if
 * missing and set as the search path of every connection, so the SQL names
 * its tables without a prefix, as on SQLite.
 */
export async function postgresSql(o: PostgresOptions): Promise<Sql & { pool: pg.Pool }> {
  if (!/^[a-z_][a-z0-9_]*$/.test(o.schema)) throw new Error(`Invalid schema name ${o.schema}`)
  const setup = new pg.Client({ connectionString: o.url })
  await setup.connect()
  try {
    // Replicas starting together on a new database: IF NOT EXISTS alone can still collide in the catalog.
    await setup.query('SELECT pg_advisory_lock($1)', [advisoryLockKey(`schema ${o.schema}`)])
    await setup.query(`CREATE SCHEMA IF NOT EXISTS ${o.schema}`)
  } finally {
    await setup.end()
  }
  const pool = new pg.Pool({ connectionString: o.url, max: o.poolSize ?? 10, options: `-c search_path=${o.schema}`, types })
  // An idle connection the server dropped must not end the process; the pool replaces it.
  pool.on('error', () => {})

  const exclusively: Sql['exclusively'] = async (name, fn) => {
    const key = advisoryLockKey(name)
    const client = await pool.connect()
    let broken: Error | undefined
    try {
      const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [key])
      if (!rows[0].locked) return undefined
      try {
        return await fn()
      } finally {
        await client.query('SELECT pg_advisory_unlock($1)', [key]).catch((err: Error) => (broken = err))
      }
    } finally {
      // A connection that could not unlock is closed, which ends its lock with it.
      client.release(broken)
    }
  }

  const over = (q: pg.Pool | pg.PoolClient): Omit<Sql, 'transaction' | 'exclusively' | 'close'> => ({
    dialect: 'postgres',
    async all<T>(text: string, params: readonly unknown[] = []) {
      return (await q.query(toPostgresText(text), params as unknown[])).rows as T[]
    },
    async column<T>(text: string, params: readonly unknown[] = []) {
      const { rows } = await q.query<unknown[]>({ text: toPostgresText(text), values: params as unknown[], rowMode: 'array' })
      return rows.map((r) => r[0] as T)
    },
    async get<T>(text: string, params: readonly unknown[] = []) {
      return (await q.query(toPostgresText(text), params as unknown[])).rows[0] as T | undefined
    },
    async run(text: string, params: readonly unknown[] = []): Promise<RunResult> {
      return { changes: (await q.query(toPostgresText(text), params as unknown[])).rowCount ?? 0 }
    },
    async exec(text: string) {
      await q.query(text)
    },
  })

  return {
    ...over(pool),
    pool,
    exclusively,
    async transaction(fn) {
      const client = await pool.connect()
      const tx: Sql = { ...over(client), transaction: (inner) => inner(tx), exclusively, close: async () => {} }
      try {
        await client.query('BEGIN')
        const result = await fn(tx)
        await client.query('COMMIT')
        return result
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {})
        throw err
      } finally {
        client.release()
      }
    },
    close: () => pool.end(),
  }
}
