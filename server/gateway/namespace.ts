import { DEFAULT_CID_PROFILE, LEGACY_CID_PROFILE, type CidProfile } from '../shared/cid-profile.ts'
import { randomBytes } from 'node:crypto'
import { jsonList, migrateSql, type Sql, type Step } from '../shared/sql/index.ts'
import { createSerial } from './store.ts'

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
  /** A file's: how it was imported; a folder's: how its CID is made (sharding rule). Kept by copies and moves. */
  cidProfile: CidProfile
}

export interface FileContent {
  cid: string
  size: number
  dagSize: number
  contentType?: string | null
  modifiedMs?: number
  checksum?: string | null
  cidProfile?: CidProfile
}

export interface Namespace {
  get(path: string): Promise<Entry | undefined>
  /** Direct children of a folder, sorted by path. */
  children(path: string): Promise<Entry[]>
  /** Everything below a folder (not the folder itself), sorted by path. */
  descendants(path: string): Promise<Entry[]>
  /** Creates or replaces a file; its parent must be an existing folder. */
  putFile(path: string, content: FileContent): Promise<{ created: boolean }>
  makeDir(path: string): Promise<void>
  /** Removes a file, or a folder with everything below it. */
  remove(path: string): Promise<void>
  /** Copies `from` (and, for a folder with `deep`, everything below) to `to`, which must not exist. */
  copy(from: string, to: string, deep?: boolean): Promise<void>
  /** Moves `from` and everything below to `to`, which must not exist. */
  move(from: string, to: string): Promise<void>
  setModified(path: string, modifiedMs: number): Promise<void>
  /** Total size of the files below a folder (Nextcloud's `oc:size` of a folder). */
  folderSize(path: string): Promise<number>
  /** This gateway's instance id, the suffix of Nextcloud-style `oc:id`s. */
  readonly instanceId: string
  /**
   * Runs `fn` in one transaction, after every namespace change before it:
   * what `fn` reads (through `within(tx)` and the other stores over `tx`)
   * cannot change under it before it commits, on SQLite and PostgreSQL alike.
   */
  transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T>
  /** The same namespace over a transaction's handle (inside `transaction`). */
  within(tx: Sql): Namespace
}

export function parentOf(path: string): string {
  if (path === '/') return '/'
  const i = path.lastIndexOf('/')
  return i <= 0 ? '/' : path.slice(0, i)
}

export function nameOf(path: string): string {
  return path === '/' ? '' : path.slice(path.lastIndexOf('/') + 1)
}

/** The entries table as shipped for SQLite (steps never change once shipped). */
const ENTRIES_V1 = `CREATE TABLE entries (
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
     VALUES ('/', NULL, 'dir', 'root', CAST(unixepoch('subsec') * 1000 AS INTEGER), CAST(unixepoch('subsec') * 1000 AS INTEGER));`

const SCHEMA: Step[] = [
  // Paths sort byte by byte on PostgreSQL too (the folder range queries rely on it), as BINARY does on SQLite.
  {
    sqlite: ENTRIES_V1,
    postgres: ENTRIES_V1.replace('path TEXT PRIMARY KEY', 'path TEXT COLLATE "C" PRIMARY KEY').replace(
      'parent TEXT,',
      'parent TEXT COLLATE "C",',
    ),
  },
  // Stable file ids for sync clients: never reused (AUTOINCREMENT), carried along by moves.
  {
    sqlite: `CREATE TABLE file_ids (id INTEGER PRIMARY KEY AUTOINCREMENT);
   CREATE TABLE namespace_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
   INSERT INTO namespace_meta (key, value) VALUES ('instance_id', 'oc' || lower(hex(randomblob(5))));
   ALTER TABLE entries ADD COLUMN file_id INTEGER;
   ALTER TABLE entries ADD COLUMN checksum TEXT;
   INSERT INTO file_ids (id) SELECT rowid FROM entries ORDER BY rowid;
   UPDATE entries SET file_id = rowid;
   CREATE UNIQUE INDEX entries_file_id ON entries (file_id);`,
    // A new PostgreSQL schema holds only the root here.
    postgres: `CREATE TABLE file_ids (id INTEGER PRIMARY KEY AUTOINCREMENT);
   CREATE TABLE namespace_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
   INSERT INTO namespace_meta (key, value) VALUES ('instance_id', 'oc' || substr(md5(random()::text), 1, 10));
   ALTER TABLE entries ADD COLUMN file_id INTEGER;
   ALTER TABLE entries ADD COLUMN checksum TEXT;
   WITH root AS (INSERT INTO file_ids DEFAULT VALUES RETURNING id) UPDATE entries SET file_id = (SELECT id FROM root);
   CREATE UNIQUE INDEX entries_file_id ON entries (file_id);`,
  },
  // The IPIP-499 profile each file was imported with and each folder's CID is made with; NULL: stored before, LEGACY_CID_PROFILE.
  'ALTER TABLE entries ADD COLUMN cid_profile TEXT',
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
  cid_profile: CidProfile | null
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
  cidProfile: r.cid_profile ?? LEGACY_CID_PROFILE,
})

const newEtag = () => randomBytes(9).toString('base64url')

// '/' is 0x2F and '0' is 0x30: every path strictly below P sorts in [P + '/', P + '0').
const belowRange = (path: string): [string, string] => (path === '/' ? ['/', '0'] : [path + '/', path + '0'])

/** The path and every folder above it, up to the root. */
function selfAndAncestors(path: string): string[] {
  const out = [path]
  for (let p = path; p !== '/';) {
    p = parentOf(p)
    out.push(p)
  }
  return out
}

/** Characters, as SQL's substr counts them (JavaScript's length counts UTF-16 units). */
const charLength = (s: string) => [...s].length

const COLUMNS = 'path, parent, kind, cid, size, dag_size, content_type, etag, created_ms, modified_ms, file_id, checksum, cid_profile'

/**
 * The gateway's file tree in its store; migrates it first. New folders get
 * `cidProfile` (DEFAULT_CID_PROFILE without it); so does the root of a tree
 * that holds nothing yet. An existing folder keeps the profile it has.
 */
export async function createNamespace(sql: Sql, options: { cidProfile?: CidProfile } = {}): Promise<Namespace> {
  await migrateSql(sql, 'gateway.namespace', SCHEMA)
  const cidProfile = options.cidProfile ?? DEFAULT_CID_PROFILE
  await sql.run(
    "UPDATE entries SET cid_profile = ? WHERE path = '/' AND cid_profile IS NULL AND NOT EXISTS (SELECT 1 FROM entries WHERE path <> '/')",
    [cidProfile],
  )
  const instanceId = (await sql.get<{ value: string }>("SELECT value FROM namespace_meta WHERE key = 'instance_id'"))!.value
  // Namespace changes run one at a time, as on SQLite: on PostgreSQL two transactions
  // could otherwise both find a path free and both take it. One gateway per schema
  // (the database lock), so an in-process queue is enough.
  const serial = createSerial()
  const transaction = <T>(fn: (tx: Sql) => Promise<T>) => serial(() => sql.transaction(fn))
  return namespaceOver(sql, instanceId, transaction, cidProfile)
}

function namespaceOver(sql: Sql, instanceId: string, transaction: Namespace['transaction'], cidProfile: CidProfile): Namespace {
  const list = jsonList(sql.dialect)
  const all = async (text: string, params: unknown[]) => (await sql.all<Row>(text, params)).map(toEntry)
  const get = async (path: string) => {
    const row = await sql.get<Row>('SELECT * FROM entries WHERE path = ?', [path])
    return row && toEntry(row)
  }
  const descendants = (path: string) => all('SELECT * FROM entries WHERE path > ? AND path < ? ORDER BY path', belowRange(path))
  const nextFileId = async (q: Sql) => (await q.get<{ id: number }>('INSERT INTO file_ids DEFAULT VALUES RETURNING id'))!.id
  /**
   * A change below a folder changes the etag of every folder above it, up to
   * the root, as in Nextcloud: a sync client compares the root's etag to know
   * whether anything changed at all. Only the direct parent's mtime moves.
   * One statement, whatever the depth.
   */
  const touchParent = (q: Sql, path: string, now: number) => {
    const parent = parentOf(path)
    return q.run(`UPDATE entries SET etag = ?, modified_ms = CASE WHEN path = ? THEN ? ELSE modified_ms END WHERE path IN (${list})`, [
      newEtag(),
      parent,
      now,
      JSON.stringify(selfAndAncestors(parent)),
    ])
  }
  const insert = (q: Sql, e: Omit<Entry, 'path'>, path: string) =>
    q.run(`INSERT INTO entries (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
      path,
      parentOf(path),
      e.kind,
      e.cid,
      e.size,
      e.dagSize,
      e.contentType,
      e.etag,
      e.createdMs,
      e.modifiedMs,
      e.fileId,
      e.checksum,
      e.cidProfile,
    ])
  const insertCopy = async (q: Sql, e: Entry, path: string, now: number) =>
    insert(q, { ...e, etag: newEtag(), createdMs: now, fileId: await nextFileId(q) }, path)

  const ns: Namespace = {
    get,
    children: (path) => all('SELECT * FROM entries WHERE parent = ? ORDER BY path', [path]),
    descendants,
    putFile: (path, c) =>
      transaction(async (tx) => {
        const now = Date.now()
        const created = !(await tx.get('SELECT 1 AS found FROM entries WHERE path = ?', [path]))
        await tx.run(
          `INSERT INTO entries (${COLUMNS}) VALUES (?, ?, 'file', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (path) DO UPDATE SET cid = excluded.cid, size = excluded.size, dag_size = excluded.dag_size,
             content_type = excluded.content_type, etag = excluded.etag, modified_ms = excluded.modified_ms, checksum = excluded.checksum,
             cid_profile = excluded.cid_profile`,
          [
            path,
            parentOf(path),
            c.cid,
            c.size,
            c.dagSize,
            c.contentType ?? null,
            newEtag(),
            now,
            c.modifiedMs ?? now,
            created ? await nextFileId(tx) : null,
            c.checksum ?? null,
            c.cidProfile ?? cidProfile,
          ],
        )
        await touchParent(tx, path, now)
        return { created }
      }),
    makeDir: (path) =>
      transaction(async (tx) => {
        const now = Date.now()
        await insert(
          tx,
          {
            kind: 'dir',
            cid: null,
            size: 0,
            dagSize: 0,
            contentType: null,
            etag: newEtag(),
            createdMs: now,
            modifiedMs: now,
            fileId: await nextFileId(tx),
            checksum: null,
            cidProfile,
          },
          path,
        )
        await touchParent(tx, path, now)
      }),
    remove: (path) =>
      transaction(async (tx) => {
        await tx.run('DELETE FROM entries WHERE path = ? OR (path > ? AND path < ?)', [path, ...belowRange(path)])
        await touchParent(tx, path, Date.now())
      }),
    copy: (from, to, deep = true) =>
      transaction(async (tx) => {
        const now = Date.now()
        const inTx = ns.within(tx)
        const source = await inTx.get(from)
        if (!source) return
        await insertCopy(tx, source, to, now)
        if (deep && source.kind === 'dir') {
          for (const e of await inTx.descendants(from)) await insertCopy(tx, e, to + e.path.slice(from.length), now)
        }
        await touchParent(tx, to, now)
      }),
    move: (from, to) =>
      transaction(async (tx) => {
        const now = Date.now()
        // Everything keeps its etag and file id; only the paths change, in one statement.
        const cut = charLength(from) + 1
        await tx.run(
          `UPDATE entries SET path = ? || substr(path, ?), parent = CASE WHEN path = ? THEN ? ELSE ? || substr(parent, ?) END
           WHERE path = ? OR (path > ? AND path < ?)`,
          [to, cut, from, parentOf(to), to, cut, from, ...belowRange(from)],
        )
        await touchParent(tx, from, now)
        await touchParent(tx, to, now)
      }),
    setModified: async (path, modifiedMs) => {
      await sql.run('UPDATE entries SET modified_ms = ? WHERE path = ?', [modifiedMs, path])
    },
    folderSize: async (path) =>
      (await sql.get<{ total: number }>(
        "SELECT CAST(coalesce(sum(size), 0) AS BIGINT) AS total FROM entries WHERE kind = 'file' AND path > ? AND path < ?",
        belowRange(path),
      ))!.total,
    instanceId,
    transaction,
    // Inside a transaction: the handle is the transaction's, and nested changes are part of it.
    within: (tx) => namespaceOver(tx, instanceId, (fn) => fn(tx), cidProfile),
  }
  return ns
}
