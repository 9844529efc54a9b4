import { randomUUID } from 'node:crypto'
import { jsonList, type Sql } from '../../shared/sql/index.ts'
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
 * Write locks (RFC 4918 class 2), kept in the gateway's store so they survive a restart.
 * A lock lives until it times out, is unlocked, or its root resource is
 * deleted or moved away (locks never follow a MOVE or COPY).
 */
export interface LockStore {
  /** Live locks that apply to `path`: rooted there, or depth-infinity locks on a folder above it. */
  covering(path: string): Promise<Lock[]>
  /** Live locks rooted strictly below `path`. */
  below(path: string): Promise<Lock[]>
  get(token: string): Promise<Lock | undefined>
  create(lock: Omit<Lock, 'token' | 'expiresMs'>): Promise<Lock>
  refresh(token: string, timeoutS: number): Promise<Lock>
  remove(token: string): Promise<void>
  /** Drops the locks rooted at `path` or below it. */
  removeTree(path: string): Promise<void>
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

/** Locks over `sql` (the store, or a transaction's handle). */
export function createLockStore(sql: Sql, now: () => number = Date.now): LockStore {
  const locks = async (text: string, params: unknown[]) => (await sql.all<Row>(text, params)).map(toLock)
  const get = async (token: string) => {
    const row = await sql.get<Row>('SELECT * FROM webdav_locks WHERE token = ? AND expires_ms > ?', [token, now()])
    return row && toLock(row)
  }

  return {
    async covering(path) {
      const rows = await locks(`SELECT * FROM webdav_locks WHERE expires_ms > ? AND root IN (${jsonList(sql.dialect)})`, [
        now(),
        JSON.stringify(selfAndAncestors(path)),
      ])
      return rows.filter((l) => l.root === path || l.depth === 'infinity')
    },
    below: (path) => locks('SELECT * FROM webdav_locks WHERE expires_ms > ? AND root > ? AND root < ?', [now(), ...belowRange(path)]),
    get,
    async create(lock) {
      const t = now()
      await sql.run('DELETE FROM webdav_locks WHERE expires_ms <= ?', [t])
      const created: Lock = { ...lock, token: `opaquelocktoken:${randomUUID()}`, expiresMs: t + lock.timeoutS * 1000 }
      await sql.run('INSERT INTO webdav_locks (token, root, depth, scope, owner, timeout_s, expires_ms) VALUES (?, ?, ?, ?, ?, ?, ?)', [
        created.token,
        created.root,
        created.depth,
        created.scope,
        created.owner ? JSON.stringify(created.owner) : null,
        created.timeoutS,
        created.expiresMs,
      ])
      return created
    },
    async refresh(token, timeoutS) {
      await sql.run('UPDATE webdav_locks SET timeout_s = ?, expires_ms = ? WHERE token = ?', [timeoutS, now() + timeoutS * 1000, token])
      return (await get(token))!
    },
    async remove(token) {
      await sql.run('DELETE FROM webdav_locks WHERE token = ?', [token])
    },
    async removeTree(path) {
      await sql.run('DELETE FROM webdav_locks WHERE root = ? OR (root > ? AND root < ?)', [path, ...belowRange(path)])
    },
  }
}

/** True when `lock` applies to `path`. */
export const covers = (lock: Lock, path: string) => lock.root === path || (lock.depth === 'infinity' && isWithin(path, lock.root))
