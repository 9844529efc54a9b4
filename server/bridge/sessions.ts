import { randomBytes } from 'node:crypto'
import { migrate, type Db } from '../shared/db.ts'
import { sha256Hex } from '../shared/secrets.ts'

/** A browser login on the preview page, as Nextcloud's session plus its CSRF request token. */
export interface Session {
  userId: string
  /** Sent back by the page in the `requesttoken` header; a request without it fails the CSRF check. */
  requestToken: string
  expiresMs: number
}

export interface SessionStore {
  /** Returns the new session id (for the cookie; only its hash is stored) and the session. */
  create(userId: string, now?: number): { id: string; session: Session }
  get(id: string, now?: number): Session | undefined
  destroy(id: string): void
}

export interface SessionStoreOptions {
  ttlMs?: number
}

const SCHEMA = [
  `CREATE TABLE sessions (
     id_hash TEXT PRIMARY KEY,
     user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
     request_token TEXT NOT NULL,
     created_ms INTEGER NOT NULL,
     expires_ms INTEGER NOT NULL
   );
   CREATE INDEX sessions_expiry ON sessions (expires_ms);`,
]

/** Sessions in the bridge's SQLite, so they survive a restart; expire after `ttlMs` (12 h). */
export function createSessionStore(db: Db, opts: SessionStoreOptions = {}): SessionStore {
  const ttlMs = opts.ttlMs ?? 12 * 3600_000
  migrate(db, 'bridge.sessions', SCHEMA)
  const q = {
    insert: db.prepare('INSERT INTO sessions (id_hash, user_id, request_token, created_ms, expires_ms) VALUES (?, ?, ?, ?, ?)'),
    get: db.prepare('SELECT user_id, request_token, expires_ms FROM sessions WHERE id_hash = ?'),
    remove: db.prepare('DELETE FROM sessions WHERE id_hash = ?'),
    prune: db.prepare('DELETE FROM sessions WHERE expires_ms <= ?'),
  }
  return {
    create(userId, now = Date.now()) {
      q.prune.run(now)
      const id = randomBytes(32).toString('base64url')
      const session = { userId, requestToken: randomBytes(32).toString('base64url'), expiresMs: now + ttlMs }
      q.insert.run(sha256Hex(id), userId, session.requestToken, now, session.expiresMs)
      return { id, session }
    },
    get(id, now = Date.now()) {
      const row = q.get.get(sha256Hex(id)) as { user_id: string; request_token: string; expires_ms: number } | undefined
      if (!row || row.expires_ms <= now) return undefined
      return { userId: row.user_id, requestToken: row.request_token, expiresMs: row.expires_ms }
    },
    destroy: (id) => void q.remove.run(sha256Hex(id)),
  }
}
