import type { Db } from '../../shared/db.ts'
import { belowRange } from './schema.ts'
import type { XmlElement } from './xml.ts'

/**
 * Dead properties (any namespace, set by PROPPATCH), kept in SQLite as the
 * parsed property element so they come back with their namespaces intact.
 * They follow their resource through COPY and MOVE and go with it on DELETE.
 */
export interface DeadProps {
  list(path: string): XmlElement[]
  set(path: string, prop: XmlElement): void
  remove(path: string, ns: string, local: string): void
  /** Copies the props of `from` (and, with `deep`, of everything below) to the same places under `to`. */
  copy(from: string, to: string, deep: boolean): void
  move(from: string, to: string): void
  /** Forgets the props of `path` and everything below. */
  removeTree(path: string): void
}

interface Row {
  path: string
  ns: string
  name: string
  element: string
}

export function createDeadProps(db: Db): DeadProps {
  const q = {
    list: db.prepare('SELECT element FROM webdav_props WHERE path = ? ORDER BY ns, name'),
    tree: db.prepare('SELECT * FROM webdav_props WHERE path = ? OR (path > ? AND path < ?)'),
    set: db.prepare(`INSERT INTO webdav_props (path, ns, name, element) VALUES (?, ?, ?, ?)
      ON CONFLICT (path, ns, name) DO UPDATE SET element = excluded.element`),
    remove: db.prepare('DELETE FROM webdav_props WHERE path = ? AND ns = ? AND name = ?'),
    removeTree: db.prepare('DELETE FROM webdav_props WHERE path = ? OR (path > ? AND path < ?)'),
  }
  const rowsOf = (path: string, deep: boolean): Row[] =>
    deep ? (q.tree.all(path, ...belowRange(path)) as Row[]) : (q.tree.all(path, '', '') as Row[])
  const removeTree = (path: string) => q.removeTree.run(path, ...belowRange(path))
  const copy = (from: string, to: string, deep: boolean) => {
    for (const r of rowsOf(from, deep)) q.set.run(to + r.path.slice(from.length), r.ns, r.name, r.element)
  }

  return {
    list: (path) => (q.list.all(path) as { element: string }[]).map((r) => JSON.parse(r.element) as XmlElement),
    set: (path, prop) => q.set.run(path, prop.ns, prop.local, JSON.stringify(prop)),
    remove: (path, ns, local) => q.remove.run(path, ns, local),
    copy,
    move: db.transaction((from: string, to: string) => {
      copy(from, to, true)
      removeTree(from)
    }),
    removeTree,
  }
}
