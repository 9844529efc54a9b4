import type Database from 'better-sqlite3'
import type { Sql } from './types.ts'

type Statement = Database.Statement<unknown[]>

/**
 * The query layer over a better-sqlite3 connection. Queries run synchronously
 * underneath (SQLite in-process is faster that way); a transaction holds a
 * queue so that what other requests do while its body awaits waits for the
 * commit instead of landing inside it.
 */
export function sqliteSql(db: Database.Database): Sql {
  const statements = new Map<string, Statement>()
  const prepare = (text: string): Statement => {
    let s = statements.get(text)
    if (!s) {
      s = db.prepare(text)
      statements.set(text, s)
    }
    return s
  }
  // The open transaction (BEGIN … COMMIT) settles this; queries from outside wait for it.
  let open: Promise<void> | undefined
  // Transactions queue behind each other.
  let queue: Promise<void> = Promise.resolve()

  // Plucking statements apart: the mode belongs to the statement.
  const plucking = new Map<string, Statement>()
  const prepareColumn = (text: string): Statement => {
    let s = plucking.get(text)
    if (!s) {
      s = db.prepare(text).pluck()
      plucking.set(text, s)
    }
    return s
  }

  const direct = {
    all: <T>(text: string, params: readonly unknown[] = []) => prepare(text).all(...params) as T[],
    column: <T>(text: string, params: readonly unknown[] = []) => prepareColumn(text).all(...params) as T[],
    get: <T>(text: string, params: readonly unknown[] = []) => {
      const s = prepare(text)
      return (s.reader ? s.get(...params) : (s.run(...params), undefined)) as T | undefined
    },
    run: (text: string, params: readonly unknown[] = []) => ({ changes: prepare(text).run(...params).changes }),
    exec: (text: string) => void db.exec(text),
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
        db.exec('BEGIN IMMEDIATE')
        try {
          const result = await fn(inside)
          db.exec('COMMIT')
          return result
        } catch (err) {
          if (db.inTransaction) db.exec('ROLLBACK')
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
