import { LEGACY_CID_PROFILE, type CidProfile } from '../shared/cid-profile.ts'
import type { Sql } from '../shared/sql/index.ts'

/**
 * One path of the gateway's file tree and the content it holds (by root CID).
 * Paths are absolute, decoded, without trailing slash; the root is `/`.
 * Content bytes live in the content store; an entry only names them.
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

export function parentOf(path: string): string {
  if (path === '/') return '/'
  const i = path.lastIndexOf('/')
  return i <= 0 ? '/' : path.slice(0, i)
}

export function nameOf(path: string): string {
  return path === '/' ? '' : path.slice(path.lastIndexOf('/') + 1)
}

// '/' is 0x2F and '0' is 0x30: every path strictly below P sorts in [P + '/', P + '0').
export const belowRange = (path: string): [string, string] => (path === '/' ? ['/', '0'] : [path + '/', path + '0'])

/** An `entries` row as the store returns it. */
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

/** The columns of an `entries` row, in the order an INSERT of a whole entry gives them. */
export const COLUMNS =
  'path, parent, kind, cid, size, dag_size, content_type, etag, created_ms, modified_ms, file_id, checksum, cid_profile'

/** The entries a query selects (its columns those of `entries`). */
export const selectEntries = async (q: Sql, text: string, params: unknown[]) => (await q.all<Row>(text, params)).map(toEntry)

/** The entry at `path`, or undefined. */
export const entryAt = async (q: Sql, path: string) => {
  const row = await q.get<Row>('SELECT * FROM entries WHERE path = ?', [path])
  return row && toEntry(row)
}

/** Everything below a folder (not the folder itself), sorted by path. */
export const entriesBelow = (q: Sql, path: string) =>
  selectEntries(q, 'SELECT * FROM entries WHERE path > ? AND path < ? ORDER BY path', belowRange(path))
