import { DEFAULT_CID_PROFILE, type CidProfile } from '../shared/cid-profile.ts'
import { migrateSql, type Sql, type Step } from '../shared/sql/index.ts'
import { belowRange, entriesBelow, entryAt, selectEntries, type Entry, type FileContent } from './namespace-entries.ts'
import { copyIn, makeDirIn, moveIn, putFileIn, removeIn } from './namespace-writes.ts'
import { createSerial } from './store.ts'

export { nameOf, parentOf, type Entry, type FileContent } from './namespace-entries.ts'

/**
 * The gateway's file tree: which path holds which content (by root CID).
 * Its entries, their paths and rows are in namespace-entries.ts; its changes,
 * one transaction each, in namespace-writes.ts.
 */
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

/**
 * The namespace over `sql`: reads straight from it, each change in a
 * transaction `transaction` opens (namespace-writes.ts).
 */
function namespaceOver(sql: Sql, instanceId: string, transaction: Namespace['transaction'], cidProfile: CidProfile): Namespace {
  return {
    get: (path) => entryAt(sql, path),
    children: (path) => selectEntries(sql, 'SELECT * FROM entries WHERE parent = ? ORDER BY path', [path]),
    descendants: (path) => entriesBelow(sql, path),
    putFile: (path, c) => transaction((tx) => putFileIn(tx, path, c, cidProfile)),
    makeDir: (path) => transaction((tx) => makeDirIn(tx, path, cidProfile)),
    remove: (path) => transaction((tx) => removeIn(tx, path)),
    copy: (from, to, deep = true) => transaction((tx) => copyIn(tx, from, to, deep)),
    move: (from, to) => transaction((tx) => moveIn(tx, from, to)),
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
}
