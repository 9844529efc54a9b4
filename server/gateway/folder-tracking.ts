import type { Sql } from '../shared/sql/index.ts'
import type { Namespace } from './namespace.ts'

/**
 * Namespaces that say which paths they change: `changed` hears of each write
 * once it is done, and of a transaction's writes once more after it commits,
 * so that a summary made from what the transaction had not yet committed is
 * not kept. Returns the function that wraps a namespace; namespaces wrapped
 * by the same one share their open transactions (`within` finds them).
 */
export function changeTracking(changed: (paths: string[]) => void): (ns: Namespace) => Namespace {
  // The paths each open transaction changed, to tell again once it commits.
  const open = new WeakMap<Sql, string[]>()

  const tracking = (ns: Namespace, buffer?: string[]): Namespace => {
    const note = (paths: string[]) => {
      changed(paths)
      buffer?.push(...paths)
    }
    const after = async <T>(run: Promise<T>, paths: string[]): Promise<T> => {
      try {
        return await run
      } finally {
        note(paths)
      }
    }
    return {
      get: (p) => ns.get(p),
      children: (p) => ns.children(p),
      descendants: (p) => ns.descendants(p),
      folderSize: (p) => ns.folderSize(p),
      setModified: (p, ms) => ns.setModified(p, ms),
      instanceId: ns.instanceId,
      putFile: (p, c) => after(ns.putFile(p, c), [p]),
      makeDir: (p) => after(ns.makeDir(p), [p]),
      remove: (p) => after(ns.remove(p), [p]),
      copy: (from, to, deep) => after(ns.copy(from, to, deep), [to]),
      move: (from, to) => after(ns.move(from, to), [from, to]),
      async transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T> {
        const inside: string[] = []
        try {
          return await ns.transaction((tx) => {
            open.set(tx, inside)
            return fn(tx)
          })
        } finally {
          // Again once committed: a summary made from what the transaction had not yet committed is not kept.
          if (inside.length > 0) changed(inside)
        }
      },
      within: (tx) => tracking(ns.within(tx), open.get(tx) ?? buffer),
    }
  }
  return (ns) => tracking(ns)
}
