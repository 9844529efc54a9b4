import { randomBytes } from 'node:crypto'
import { migrateSql, type Sql } from '../shared/sql/index.ts'
import { isDiskFull } from '../shared/disk.ts'
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
  create(userId: string, now?: number): Promise<{ id: string; session: Session }>
  get(id: string, now?: number): Promise<Session | undefined>
  destroy(id: string): Promise<void>
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

/**
 * Sessions in the bridge's store, so they survive a restart and, on
 * PostgreSQL, work on every bridge replica; expire after `ttlMs` (12 h).
 */
export async function createSessionStore(sql: Sql, opts: SessionStoreOptions = {}): Promise<SessionStore> {
  const ttlMs = opts.ttlMs ?? 12 * 3600_000
  await migrateSql(sql, 'bridge.sessions', SCHEMA)
  // Sessions this replica could not write (a full disk): a login needs no write to succeed; they last until restart at most.
  const unwritten = new Map<string, Session>()
  const MAX_UNWRITTEN = 10_000
  return {
    async create(userId, now = Date.now()) {
      const id = randomBytes(32).toString('base64url')
      const session = { userId, requestToken: randomBytes(32).toString('base64url'), expiresMs: now + ttlMs }
      try {
        await sql.run('DELETE FROM sessions WHERE expires_ms <= ?', [now])
        await sql.run('INSERT INTO sessions (id_hash, user_id, request_token, created_ms, expires_ms) VALUES (?, ?, ?, ?, ?)', [
          sha256Hex(id),
          userId,
          session.requestToken,
          now,
          session.expiresMs,
        ])
      } catch (err) {
        if (!isDiskFull(err)) throw err
        if (unwritten.size >= MAX_UNWRITTEN) unwritten.delete(unwritten.keys().next().value!)
        unwritten.set(sha256Hex(id), session)
      }
      return { id, session }
    },
    async get(id, now = Date.now()) {
      const key = sha256Hex(id)
      const held = unwritten.get(key)
      if (held) return held.expiresMs > now ? held : undefined
      const row = await sql.get<{ user_id: string; request_token: string; expires_ms: number }>(
        'SELECT user_id, request_token, expires_ms FROM sessions WHERE id_hash = ?',
        [key],
      )
      if (!row || row.expires_ms <= now) return undefined
      return { userId: row.user_id, requestToken: row.request_token, expiresMs: row.expires_ms }
    },
    async destroy(id) {
      const key = sha256Hex(id)
      if (unwritten.delete(key)) return
      await sql.run('DELETE FROM sessions WHERE id_hash = ?', [key])
    },
  }
}
