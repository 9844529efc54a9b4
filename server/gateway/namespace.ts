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
  /** Stable id (Nextcloud's `fileid`): kept by a move or rename, new for a copy or a new file. */
  fileId: number
  /** A checksum the client sent and we verified (`SHA1:…`, Nextcloud's `OC-Checksum` form); null when none. */
  checksum: string | null
}

export interface FileContent {
  cid: string
  size: number
  dagSize: number
  contentType?: string | null
  modifiedMs?: number
  checksum?: string | null
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
  /** Total size of the files below a folder (Nextcloud's `oc:size` of a folder). */
  folderSize(path: string): number
  /** This gateway's instance id, the suffix of Nextcloud-style `oc:id`s. */
  readonly instanceId: string
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
  // Stable file ids for sync clients: never reused (AUTOINCREMENT), carried along by moves.
  `CREATE TABLE file_ids (id INTEGER PRIMARY KEY AUTOINCREMENT);
   CREATE TABLE namespace_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
   INSERT INTO namespace_meta (key, value) VALUES ('instance_id', 'oc' || lower(hex(randomblob(5))));
   ALTER TABLE entries ADD COLUMN file_id INTEGER;
   ALTER TABLE entries ADD COLUMN checksum TEXT;
   INSERT INTO file_ids (id) SELECT rowid FROM entries ORDER BY rowid;
   UPDATE entries SET file_id = rowid;
   CREATE UNIQUE INDEX entries_file_id ON entries (file_id);`,
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
  file_id: number
  checksum: string | null
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
  fileId: r.file_id,
  checksum: r.checksum,
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
    upsertFile: db.prepare(`INSERT INTO entries (path, parent, kind, cid, size, dag_size, content_type, etag, created_ms, modified_ms, file_id, checksum)
      VALUES (@path, @parent, 'file', @cid, @size, @dagSize, @contentType, @etag, @now, @modified, @fileId, @checksum)
      ON CONFLICT(path) DO UPDATE SET cid = excluded.cid, size = excluded.size, dag_size = excluded.dag_size,
        content_type = excluded.content_type, etag = excluded.etag, modified_ms = excluded.modified_ms, checksum = excluded.checksum`),
    insert: db.prepare(`INSERT INTO entries (path, parent, kind, cid, size, dag_size, content_type, etag, created_ms, modified_ms, file_id, checksum)
      VALUES (@path, @parent, @kind, @cid, @size, @dagSize, @contentType, @etag, @createdMs, @modifiedMs, @fileId, @checksum)`),
    touch: db.prepare('UPDATE entries SET modified_ms = ?, etag = ? WHERE path = ?'),
    touchEtag: db.prepare('UPDATE entries SET etag = ? WHERE path = ?'),
    nextFileId: db.prepare('INSERT INTO file_ids DEFAULT VALUES'),
    folderSize: db.prepare("SELECT coalesce(sum(size), 0) FROM entries WHERE kind = 'file' AND path > ? AND path < ?").pluck(),
    instanceId: db.prepare("SELECT value FROM namespace_meta WHERE key = 'instance_id'").pluck(),
  }
  const nextFileId = () => Number(q.nextFileId.run().lastInsertRowid)
  const instanceId = q.instanceId.get() as string

  const get = (path: string) => {
    const row = q.get.get(path) as Row | undefined
    return row && toEntry(row)
  }
  const descendants = (path: string) => (q.below.all(...belowRange(path)) as Row[]).map(toEntry)
  /**
   * A change below a folder changes the etag of every folder above it, up to
   * the root, as in Nextcloud: a sync client compares the root's etag to know
   * whether anything changed at all. Only the direct parent's mtime moves.
   */
  const touchParent = (path: string, now: number) => {
    const parent = parentOf(path)
    q.touch.run(now, newEtag(), parent)
    for (let p = parent; p !== '/'; ) {
      p = parentOf(p)
      q.touchEtag.run(newEtag(), p)
    }
  }
  const insertCopy = (e: Entry, path: string, now: number) =>
    q.insert.run({ ...e, path, parent: parentOf(path), etag: newEtag(), createdMs: now, modifiedMs: e.modifiedMs, fileId: nextFileId() })

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
        fileId: created ? nextFileId() : null, checksum: c.checksum ?? null,
      })
      touchParent(path, now)
      return { created }
    },
    makeDir(path) {
      const now = Date.now()
      q.insert.run({ path, parent: parentOf(path), kind: 'dir', cid: null, size: 0, dagSize: 0, contentType: null, etag: newEtag(), createdMs: now, modifiedMs: now, fileId: nextFileId(), checksum: null })
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
    folderSize: (path) => q.folderSize.get(...belowRange(path)) as number,
    instanceId,
    transaction: (fn) => db.transaction(fn)(),
  }
  return ns
}
