import { randomBytes } from 'node:crypto'
import { migrate, type Db } from '../shared/db.ts'

/**
 * The gateway's file tree: which path holds which content (by root CID).
 * Paths are absolute, decoded, without trailing slash; the root is `/`.
 * Content bytes live in the content store; this only names them.
 */
export interface Entry {
  path: string
  kind: 'file' | 'dir'
  /** Root CID of a file's UnixFS DAG; null for folders (computed on demand). */
  cid: string | null
  size: number
  /** Cumulative size of the file's DAG blocks (the `Tsize` a parent link carries). */
  dagSize: number
  contentType: string | null
  etag: string
  createdMs: number
  modifiedMs: number
}

export interface FileContent {
  cid: string
  size: number
  dagSize: number
  contentType?: string | null
  modifiedMs?: number
}

export interface Namespace {
  get(path: string): Entry | undefined
  /** Direct children of a folder, sorted by path. */
  children(path: string): Entry[]
  /** Everything below a folder (not the folder itself), sorted by path. */
  descendants(path: string): Entry[]
  /** Creates or replaces a file; its parent must be an existing folder. */
  putFile(path: string, content: FileContent): { created: boolean }
  makeDir(path: string): void
  /** Removes a file, or a folder with everything below it. */
  remove(path: string): void
  /** Copies `from` (and, for a folder with `deep`, everything below) to `to`, which must not exist. */
  copy(from: string, to: string, deep?: boolean): void
  /** Moves `from` and everything below to `to`, which must not exist. */
  move(from: string, to: string): void
  setModified(path: string, modifiedMs: number): void
  /** Runs `fn` atomically. */
  transaction<T>(fn: () => T): T
}

export function parentOf(path: string): string {
  if (path === '/') return '/'
  const i = path.lastIndexOf('/')
  return i <= 0 ? '/' : path.slice(0, i)
}

export function nameOf(path: string): string {
  return path === '/' ? '' : path.slice(path.lastIndexOf('/') + 1)
}

const SCHEMA = [
  `CREATE TABLE entries (
     path TEXT PRIMARY KEY,
     parent TEXT,
     kind TEXT NOT NULL CHECK (kind IN ('file', 'dir')),
     cid TEXT,
     size INTEGER NOT NULL DEFAULT 0,
     dag_size INTEGER NOT NULL DEFAULT 0,
     content_type TEXT,
     etag TEXT NOT NULL,
     created_ms INTEGER NOT NULL,
     modified_ms INTEGER NOT NULL
   );
   CREATE INDEX entries_parent ON entries (parent);
   CREATE INDEX entries_cid ON entries (cid);
   INSERT INTO entries (path, parent, kind, etag, created_ms, modified_ms)
     VALUES ('/', NULL, 'dir', 'root', CAST(unixepoch('subsec') * 1000 AS INTEGER), CAST(unixepoch('subsec') * 1000 AS INTEGER));`,
]

interface Row {
  path: string
  kind: 'file' | 'dir'
  cid: string | null
  size: number
  dag_size: number
  content_type: string | null
  etag: string
  created_ms: number
  modified_ms: number
}

const toEntry = (r: Row): Entry => ({
  path: r.path,
  kind: r.kind,
  cid: r.cid,
  size: r.size,
  dagSize: r.dag_size,
  contentType: r.content_type,
  etag: r.etag,
  createdMs: r.created_ms,
  modifiedMs: r.modified_ms,
})

const newEtag = () => randomBytes(9).toString('base64url')

// '/' is 0x2F and '0' is 0x30: every path strictly below P sorts in [P + '/', P + '0').
const belowRange = (path: string): [string, string] => (path === '/' ? ['/', '0'] : [path + '/', path + '0'])

export function createNamespace(db: Db): Namespace {
  migrate(db, 'gateway.namespace', SCHEMA)
  const q = {
    get: db.prepare('SELECT * FROM entries WHERE path = ?'),
    children: db.prepare('SELECT * FROM entries WHERE parent = ? ORDER BY path'),
    below: db.prepare('SELECT * FROM entries WHERE path > ? AND path < ? ORDER BY path'),
    removeBelow: db.prepare('DELETE FROM entries WHERE path > ? AND path < ?'),
    remove: db.prepare('DELETE FROM entries WHERE path = ?'),
    upsertFile: db.prepare(`INSERT INTO entries (path, parent, kind, cid, size, dag_size, content_type, etag, created_ms, modified_ms)
      VALUES (@path, @parent, 'file', @cid, @size, @dagSize, @contentType, @etag, @now, @modified)
      ON CONFLICT(path) DO UPDATE SET cid = excluded.cid, size = excluded.size, dag_size = excluded.dag_size,
        content_type = excluded.content_type, etag = excluded.etag, modified_ms = excluded.modified_ms`),
    insert: db.prepare(`INSERT INTO entries (path, parent, kind, cid, size, dag_size, content_type, etag, created_ms, modified_ms)
      VALUES (@path, @parent, @kind, @cid, @size, @dagSize, @contentType, @etag, @createdMs, @modifiedMs)`),
    touch: db.prepare('UPDATE entries SET modified_ms = ?, etag = ? WHERE path = ?'),
  }

  const get = (path: string) => {
    const row = q.get.get(path) as Row | undefined
    return row && toEntry(row)
  }
  const descendants = (path: string) => (q.below.all(...belowRange(path)) as Row[]).map(toEntry)
  const touchParent = (path: string, now: number) => q.touch.run(now, newEtag(), parentOf(path))
  const insertCopy = (e: Entry, path: string, now: number) =>
    q.insert.run({ ...e, path, parent: parentOf(path), etag: newEtag(), createdMs: now, modifiedMs: e.modifiedMs })

  const ns: Namespace = {
    get,
    children: (path) => (q.children.all(path) as Row[]).map(toEntry),
    descendants,
    putFile(path, c) {
      const now = Date.now()
      const created = !q.get.get(path)
      q.upsertFile.run({
        path, parent: parentOf(path), cid: c.cid, size: c.size, dagSize: c.dagSize,
        contentType: c.contentType ?? null, etag: newEtag(), now, modified: c.modifiedMs ?? now,
      })
      touchParent(path, now)
      return { created }
    },
    makeDir(path) {
      const now = Date.now()
      q.insert.run({ path, parent: parentOf(path), kind: 'dir', cid: null, size: 0, dagSize: 0, contentType: null, etag: newEtag(), createdMs: now, modifiedMs: now })
      touchParent(path, now)
    },
    remove(path) {
      db.transaction(() => {
        q.removeBelow.run(...belowRange(path))
        q.remove.run(path)
        touchParent(path, Date.now())
      })()
    },
    copy(from, to, deep = true) {
      db.transaction(() => {
        const now = Date.now()
        const source = get(from)
        if (!source) return
        insertCopy(source, to, now)
        if (deep && source.kind === 'dir') {
          for (const e of descendants(from)) insertCopy(e, to + e.path.slice(from.length), now)
        }
        touchParent(to, now)
      })()
    },
    move(from, to) {
      db.transaction(() => {
        const now = Date.now()
        const all = [get(from)!, ...descendants(from)]
        q.removeBelow.run(...belowRange(from))
        q.remove.run(from)
        for (const e of all) {
          const path = to + e.path.slice(from.length)
          q.insert.run({ ...e, path, parent: parentOf(path) })
        }
        touchParent(from, now)
        touchParent(to, now)
      })()
    },
    setModified(path, modifiedMs) {
      db.prepare('UPDATE entries SET modified_ms = ? WHERE path = ?').run(modifiedMs, path)
    },
    transaction: (fn) => db.transaction(fn)(),
  }
  return ns
}
