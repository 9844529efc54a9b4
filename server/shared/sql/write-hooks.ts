import type { Sql } from './types.ts'

/** Statements that only read (`all` and `get` also carry INSERT … RETURNING). */
const READS = /^\s*(SELECT|WITH)\b/i

/**
 * `sql`, with `before` called ahead of every statement that may write (and
 * of every transaction) and `after` once it is over, whether it succeeded
 * or not. Reads go straight through. Statements inside a transaction are
 * seen too, through the handle it is given.
 */
export function watchWrites(sql: Sql, hooks: { before?: () => void; after?: () => void }): Sql {
  const write = async <T>(run: () => Promise<T>): Promise<T> => {
    hooks.before?.()
    try {
      return await run()
    } finally {
      hooks.after?.()
    }
  }
  const over = (inner: Sql): Sql => ({
    ...inner,
    all: (text, params) => (READS.test(text) ? inner.all(text, params) : write(() => inner.all(text, params))),
    get: (text, params) => (READS.test(text) ? inner.get(text, params) : write(() => inner.get(text, params))),
    run: (text, params) => write(() => inner.run(text, params)),
    exec: (text) => write(() => inner.exec(text)),
    transaction: (fn) => write(() => inner.transaction((tx) => fn(over(tx)))),
  })
  return over(sql)
}
