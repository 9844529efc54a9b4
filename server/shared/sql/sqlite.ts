import type { StatementSync } from 'node:sqlite'
import { namedSqliteError, type Db } from './sqlite-file.ts'
import type { Sql } from './types.ts'

type Params = readonly unknown[]
type Bindable = Parameters<StatementSync['all']>

/**
 * The query layer over a node:sqlite connection. Queries run synchronously
 * underneath (SQLite in-process is faster that way); a transaction holds a
 * queue so that what other requests do while its body awaits waits for the
 * commit instead of landing inside it.
 */
export function sqliteSql(db: Db): Sql {
  const statements = new Map<string, StatementSync>()
  const prepare = (text: string): StatementSync => {
    let s = statements.get(text)
    if (!s) {
      s = db.prepare(text)
      statements.set(text, s)
    }
    return s
  }
  const named = <T>(run: () => T): T => {
    try {
      return run()
    } catch (err) {
      throw namedSqliteError(err)
    }
  }
  const bind = (params: Params) => params as Bindable
  // The open transaction (BEGIN … COMMIT) settles this; queries from outside wait for it.
  let open: Promise<void> | undefined
  // Transactions queue behind each other.
  let queue: Promise<void> = Promise.resolve()
  // Rows as arrays for `column`: no row objects for long lists of one value.
  const arrays = new Map<string, StatementSync>()
  const prepareColumn = (text: string): StatementSync => {
    let s = arrays.get(text)
    if (!s) {
      s = db.prepare(text)
      s.setReturnArrays(true)
      arrays.set(text, s)
    }
    return s
  }

  const direct = {
    all: <T>(text: string, params: Params = []) => named(() => prepare(text).all(...bind(params)) as T[]),
    column: <T>(text: string, params: Params = []) =>
      named(() => (prepareColumn(text).all(...bind(params)) as unknown as unknown[][]).map((row) => row[0]) as T[]),
    get: <T>(text: string, params: Params = []) =>
      named(() => {
        const s = prepare(text)
        // A statement that returns no columns (a write) runs and answers nothing.
        return (s.columns().length > 0 ? s.get(...bind(params)) : (s.run(...bind(params)), undefined)) as T | undefined
      }),
    run: (text: string, params: Params = []) => named(() => ({ changes: Number(prepare(text).run(...bind(params)).changes) })),
    exec: (text: string) => named(() => void db.exec(text)),
  }

  const waitTurn = async () => {
    while (open) await open
  }

  /** A handle whose calls run at once: the transaction's own. */
  const inside: Sql = {
    dialect: 'sqlite',
    all: async (text, params) => direct.all(text, params),
    column: async (text, params) => direct.column(text, params),
    get: async (text, params) => direct.get(text, params),
    run: async (text, params) => direct.run(text, params),
    exec: async (text) => direct.exec(text),
    // Nested: part of the outer transaction (a savepoint would be more, and nothing needs it).
    transaction: (fn) => fn(inside),
    exclusively: (_name, fn) => fn(),
    close: async () => {},
  }

  const outer: Sql = {
    dialect: 'sqlite',
    async all(text, params) {
      if (open) await waitTurn()
      return direct.all(text, params)
    },
    async column(text, params) {
      if (open) await waitTurn()
      return direct.column(text, params)
    },
    async get(text, params) {
      if (open) await waitTurn()
      return direct.get(text, params)
    },
    async run(text, params) {
      if (open) await waitTurn()
      return direct.run(text, params)
    },
    async exec(text) {
      if (open) await waitTurn()
      direct.exec(text)
    },
    async transaction(fn) {
      const previous = queue
      let done!: () => void
      queue = new Promise<void>((resolve) => (done = resolve))
      await previous
      await waitTurn()
      let finish!: () => void
      open = new Promise<void>((resolve) => (finish = resolve))
      try {
        direct.exec('BEGIN IMMEDIATE')
        try {
          const result = await fn(inside)
          direct.exec('COMMIT')
          return result
        } catch (err) {
          if (db.isTransaction) db.exec('ROLLBACK')
          throw err
        }
      } finally {
        open = undefined
        finish()
        done()
      }
    },
    // One process owns a SQLite file: nobody else to keep out.
    exclusively: (_name, fn) => fn(),
    async close() {
      await queue
      db.close()
    },
  }
  return outer
}
