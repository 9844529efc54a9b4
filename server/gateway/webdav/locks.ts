import { randomUUID } from 'node:crypto'
import type { Db } from '../../shared/db.ts'
import { isWithin, selfAndAncestors } from './paths.ts'
import { belowRange } from './schema.ts'
import type { XmlElement } from './xml.ts'

export type LockScope = 'exclusive' | 'shared'
export type LockDepth = '0' | 'infinity'

export interface Lock {
  /** `opaquelocktoken:<uuid>` (RFC 4918 appendix C). */
  token: string
  root: string
  depth: LockDepth
  scope: LockScope
  owner?: XmlElement
  timeoutS: number
  expiresMs: number
}

/**
 * Write locks (RFC 4918 class 2), kept in SQLite so they survive a restart.
 * A lock lives until it times out, is unlocked, or its root resource is
 * deleted or moved away (locks never follow a MOVE or COPY).
 */
export interface LockStore {
  /** Live locks that apply to `path`: rooted there, or depth-infinity locks on a folder above it. */
  covering(path: string): Lock[]
  /** Live locks rooted strictly below `path`. */
  below(path: string): Lock[]
  get(token: string): Lock | undefined
  create(lock: Omit<Lock, 'token' | 'expiresMs'>): Lock
  refresh(token: string, timeoutS: number): Lock
  remove(token: string): void
  /** Drops the locks rooted at `path` or below it. */
  removeTree(path: string): void
}

interface Row {
  token: string
  root: string
  depth: LockDepth
  scope: LockScope
  owner: string | null
  timeout_s: number
  expires_ms: number
}

const toLock = (r: Row): Lock => ({
  token: r.token,
  root: r.root,
  depth: r.depth,
  scope: r.scope,
  owner: r.owner ? (JSON.parse(r.owner) as XmlElement) : undefined,
  timeoutS: r.timeout_s,
  expiresMs: r.expires_ms,
})

export function createLockStore(db: Db, now: () => number = Date.now): LockStore {
  const q = {
    atRoots: db.prepare('SELECT * FROM webdav_locks WHERE expires_ms > ? AND root IN (SELECT value FROM json_each(?))'),
    below: db.prepare('SELECT * FROM webdav_locks WHERE expires_ms > ? AND root > ? AND root < ?'),
    get: db.prepare('SELECT * FROM webdav_locks WHERE token = ? AND expires_ms > ?'),
    insert: db.prepare(`INSERT INTO webdav_locks (token, root, depth, scope, owner, timeout_s, expires_ms)
      VALUES (@token, @root, @depth, @scope, @owner, @timeoutS, @expiresMs)`),
    refresh: db.prepare('UPDATE webdav_locks SET timeout_s = ?, expires_ms = ? WHERE token = ?'),
    remove: db.prepare('DELETE FROM webdav_locks WHERE token = ?'),
    removeTree: db.prepare('DELETE FROM webdav_locks WHERE root = ? OR (root > ? AND root < ?)'),
    purge: db.prepare('DELETE FROM webdav_locks WHERE expires_ms <= ?'),
  }
  const get = (token: string) => {
    const row = q.get.get(token, now()) as Row | undefined
    return row && toLock(row)
  }

  return {
    covering(path) {
      const rows = q.atRoots.all(now(), JSON.stringify(selfAndAncestors(path))) as Row[]
      return rows.map(toLock).filter((l) => l.root === path || l.depth === 'infinity')
    },
    below: (path) => (q.below.all(now(), ...belowRange(path)) as Row[]).map(toLock),
    get,
    create(lock) {
      const t = now()
      q.purge.run(t)
      const created: Lock = { ...lock, token: `opaquelocktoken:${randomUUID()}`, expiresMs: t + lock.timeoutS * 1000 }
      q.insert.run({ ...created, owner: created.owner ? JSON.stringify(created.owner) : null })
      return created
    },
    refresh(token, timeoutS) {
      q.refresh.run(timeoutS, now() + timeoutS * 1000, token)
      return get(token)!
    },
    remove: (token) => void q.remove.run(token),
    removeTree: (path) => void q.removeTree.run(path, ...belowRange(path)),
  }
}

/** True when `lock` applies to `path`. */
export const covers = (lock: Lock, path: string) => lock.root === path || (lock.depth === 'infinity' && isWithin(path, lock.root))
