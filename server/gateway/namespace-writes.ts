import { randomBytes } from 'node:crypto'
import type { CidProfile } from '../shared/cid-profile.ts'
import { jsonList, type Sql } from '../shared/sql/index.ts'
import { belowRange, COLUMNS, entriesBelow, entryAt, parentOf, type Entry, type FileContent } from './namespace-entries.ts'

// The tree's changes, each the statements of one transaction: the caller
// (namespace.ts) opens it, in turn with every other change, and hands its handle.

const newEtag = () => randomBytes(9).toString('base64url')

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

const nextFileId = async (q: Sql) => (await q.get<{ id: number }>('INSERT INTO file_ids DEFAULT VALUES RETURNING id'))!.id

/**
 * A change below a folder changes the etag of every folder above it, up to
 * the root, as in Nextcloud: a sync client compares the root's etag to know
 * whether anything changed at all. Only the direct parent's mtime moves.
 * One statement, whatever the depth.
 */
const touchParent = (q: Sql, path: string, now: number) => {
  const parent = parentOf(path)
  return q.run(
    `UPDATE entries SET etag = ?, modified_ms = CASE WHEN path = ? THEN ? ELSE modified_ms END WHERE path IN (${jsonList(q.dialect)})`,
    [newEtag(), parent, now, JSON.stringify(selfAndAncestors(parent))],
  )
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

/** A copy is a new entry: its own etag, creation time and file id. */
const insertCopy = async (q: Sql, e: Entry, path: string, now: number) =>
  insert(q, { ...e, etag: newEtag(), createdMs: now, fileId: await nextFileId(q) }, path)

/** Creates or replaces a file; a replaced one keeps its file id and creation time. Without its own profile, `cidProfile`. */
export async function putFileIn(tx: Sql, path: string, c: FileContent, cidProfile: CidProfile): Promise<{ created: boolean }> {
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
}

/** A new, empty folder whose CID will be made with `cidProfile`. */
export async function makeDirIn(tx: Sql, path: string, cidProfile: CidProfile): Promise<void> {
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
}

/** Removes a file, or a folder with everything below it. */
export async function removeIn(tx: Sql, path: string): Promise<void> {
  await tx.run('DELETE FROM entries WHERE path = ? OR (path > ? AND path < ?)', [path, ...belowRange(path)])
  await touchParent(tx, path, Date.now())
}

/** Copies `from` (and, for a folder with `deep`, everything below) to `to`; nothing when `from` is gone. */
export async function copyIn(tx: Sql, from: string, to: string, deep: boolean): Promise<void> {
  const now = Date.now()
  const source = await entryAt(tx, from)
  if (!source) return
  await insertCopy(tx, source, to, now)
  if (deep && source.kind === 'dir') {
    for (const e of await entriesBelow(tx, from)) await insertCopy(tx, e, to + e.path.slice(from.length), now)
  }
  await touchParent(tx, to, now)
}

/** Moves `from` and everything below to `to`. */
export async function moveIn(tx: Sql, from: string, to: string): Promise<void> {
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
}
