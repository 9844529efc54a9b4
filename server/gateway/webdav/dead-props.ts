import { jsonList, type Sql } from '../../shared/sql/index.ts'
import { belowRange } from './schema.ts'
import type { XmlElement } from './xml.ts'

/**
 * Dead properties (any namespace, set by PROPPATCH), kept in the gateway's
 * store as the parsed property element so they come back with their
 * namespaces intact. They follow their resource through COPY and MOVE and go
 * with it on DELETE.
 */
export interface DeadProps {
  list(path: string): Promise<XmlElement[]>
  /** The props of several resources in one query (a PROPFIND listing), by path. */
  listMany(paths: string[]): Promise<Map<string, XmlElement[]>>
  set(path: string, prop: XmlElement): Promise<void>
  remove(path: string, ns: string, local: string): Promise<void>
  /** Copies the props of `from` (and, with `deep`, of everything below) to the same places under `to`. */
  copy(from: string, to: string, deep: boolean): Promise<void>
  move(from: string, to: string): Promise<void>
  /** Forgets the props of `path` and everything below. */
  removeTree(path: string): Promise<void>
}

/** Dead properties over `sql` (the store, or a transaction's handle). */
export function createDeadProps(sql: Sql): DeadProps {
  const removeTree = async (path: string) => {
    await sql.run('DELETE FROM webdav_props WHERE path = ? OR (path > ? AND path < ?)', [path, ...belowRange(path)])
  }
  // One statement for the whole tree; SQL's substr counts characters, not UTF-16 units.
  const copy = async (from: string, to: string, deep: boolean) => {
    await sql.run(
      `INSERT INTO webdav_props (path, ns, name, element)
       SELECT ? || substr(path, ?), ns, name, element FROM webdav_props WHERE path = ? OR (path > ? AND path < ?)
       ON CONFLICT (path, ns, name) DO UPDATE SET element = excluded.element`,
      [to, [...from].length + 1, from, ...(deep ? belowRange(from) : ['', ''])],
    )
  }

  return {
    list: async (path) =>
      (await sql.all<{ element: string }>('SELECT element FROM webdav_props WHERE path = ? ORDER BY ns, name', [path])).map(
        (r) => JSON.parse(r.element) as XmlElement,
      ),
    async listMany(paths) {
      const byPath = new Map<string, XmlElement[]>()
      if (paths.length === 0) return byPath
      const rows = await sql.all<{ path: string; element: string }>(
        `SELECT path, element FROM webdav_props WHERE path IN (${jsonList(sql.dialect)}) ORDER BY path, ns, name`,
        [JSON.stringify(paths)],
      )
      for (const r of rows) {
        const list = byPath.get(r.path)
        if (list) list.push(JSON.parse(r.element) as XmlElement)
        else byPath.set(r.path, [JSON.parse(r.element) as XmlElement])
      }
      return byPath
    },
    async set(path, prop) {
      await sql.run(
        `INSERT INTO webdav_props (path, ns, name, element) VALUES (?, ?, ?, ?)
         ON CONFLICT (path, ns, name) DO UPDATE SET element = excluded.element`,
        [path, prop.ns, prop.local, JSON.stringify(prop)],
      )
    },
    async remove(path, ns, local) {
      await sql.run('DELETE FROM webdav_props WHERE path = ? AND ns = ? AND name = ?', [path, ns, local])
    },
    copy,
    async move(from, to) {
      await sql.transaction(async (tx) => {
        const inTx = createDeadProps(tx)
        await inTx.copy(from, to, true)
        await inTx.removeTree(from)
      })
    },
    removeTree,
  }
}
