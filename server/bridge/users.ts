import { randomBytes, randomInt } from 'node:crypto'
import { migrateSql, type Sql } from '../shared/sql/index.ts'
import { hashPassword, sha256Hex, verifyPassword } from '../shared/secrets.ts'

/** An embedded user of the app surface; `id` is the login name and the `{user}` of the path map. */
export interface User {
  id: string
  displayName: string
  isAdmin: boolean
  createdMs: number
}

export interface AppPasswordInfo {
  id: number
  userId: string
  name: string
  createdMs: number
}

export interface UserStore {
  get(id: string): Promise<User | undefined>
  list(): Promise<User[]>
  count(): Promise<number>
  add(input: { id: string; password: string; displayName?: string; isAdmin?: boolean }): Promise<User>
  setPassword(id: string, password: string): Promise<void>
  remove(id: string): Promise<void>
  /** Returns the new app password; only its hash is kept, so it can be shown once. */
  createAppPassword(userId: string, name: string): Promise<{ token: string; info: AppPasswordInfo }>
  listAppPasswords(userId: string): Promise<AppPasswordInfo[]>
  /** Revokes one app password (by id) or, without an id, all of the user's; returns how many. */
  revokeAppPasswords(userId: string, id?: number): Promise<number>
  /** Checks a login (user password or app password); undefined when it does not match. */
  verify(login: string, secret: string): Promise<User | undefined>
}

export class UserStoreError extends Error {
  override name = 'UserStoreError'
  constructor(
    readonly code: 'INVALID_USER_ID' | 'USER_EXISTS' | 'NO_SUCH_USER' | 'WEAK_PASSWORD',
    message: string,
  ) {
    super(message)
  }
}

// User ids end up in gateway paths and URLs: keep them to a safe subset of Nextcloud's.
const USER_ID = /^[A-Za-z0-9_@-][A-Za-z0-9_.@-]{0,63}$/
export const MIN_PASSWORD_LENGTH = 8

export const isValidUserId = (id: string) => USER_ID.test(id)

const SCHEMA = [
  `CREATE TABLE users (
     id TEXT PRIMARY KEY,
     display_name TEXT NOT NULL,
     password_hash TEXT NOT NULL,
     is_admin INTEGER NOT NULL DEFAULT 0,
     created_ms INTEGER NOT NULL
   );
   CREATE TABLE app_passwords (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
     name TEXT NOT NULL,
     token_hash TEXT NOT NULL UNIQUE,
     created_ms INTEGER NOT NULL
   );
   CREATE INDEX app_passwords_user ON app_passwords (user_id);`,
]

interface UserRow {
  id: string
  display_name: string
  password_hash: string
  is_admin: number
  created_ms: number
}
interface AppRow {
  id: number
  user_id: string
  name: string
  created_ms: number
}

const toUser = (r: UserRow): User => ({ id: r.id, displayName: r.display_name, isAdmin: r.is_admin === 1, createdMs: r.created_ms })
const toApp = (r: AppRow): AppPasswordInfo => ({ id: r.id, userId: r.user_id, name: r.name, createdMs: r.created_ms })

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'

/** Nextcloud-looking app password: 5 groups of 5 base62 characters (~149 bits). */
export function generateAppPassword(): string {
  const chars = Array.from({ length: 25 }, () => ALPHABET[randomInt(ALPHABET.length)])
  return [0, 5, 10, 15, 20].map((i) => chars.slice(i, i + 5).join('')).join('-')
}

/** Embedded users in the bridge's store (SQLite, or PostgreSQL shared by every bridge replica). */
export async function createUserStore(sql: Sql): Promise<UserStore> {
  await migrateSql(sql, 'bridge.users', SCHEMA)
  const row = (id: string) => sql.get<UserRow>('SELECT * FROM users WHERE id = ?', [id])
  const mustExist = async (id: string) => {
    const r = await row(id)
    if (!r) throw new UserStoreError('NO_SUCH_USER', `No user "${id}"`)
    return r
  }
  const checkPassword = (password: string) => {
    if (password.length < MIN_PASSWORD_LENGTH) {
      throw new UserStoreError('WEAK_PASSWORD', `A password needs at least ${MIN_PASSWORD_LENGTH} characters`)
    }
  }
  // Unknown logins still pay for one scrypt run so timing does not tell which users exist.
  let dummyHash: Promise<string> | undefined

  return {
    async get(id) {
      const r = await row(id)
      return r && toUser(r)
    },
    list: async () => (await sql.all<UserRow>('SELECT * FROM users ORDER BY id')).map(toUser),
    count: async () => (await sql.get<{ n: number }>('SELECT COUNT(*) AS n FROM users'))!.n,
    async add({ id, password, displayName, isAdmin = false }) {
      if (!isValidUserId(id)) throw new UserStoreError('INVALID_USER_ID', `Invalid user id "${id}" (letters, digits, _ . @ -; at most 64)`)
      checkPassword(password)
      if (await row(id)) throw new UserStoreError('USER_EXISTS', `User "${id}" already exists`)
      const hash = await hashPassword(password)
      // Another replica may have added the same id while we hashed: the key decides.
      const added = await sql.get<UserRow>(
        'INSERT INTO users (id, display_name, password_hash, is_admin, created_ms) VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING RETURNING *',
        [id, displayName ?? id, hash, isAdmin ? 1 : 0, Date.now()],
      )
      if (!added) throw new UserStoreError('USER_EXISTS', `User "${id}" already exists`)
      return toUser(added)
    },
    async setPassword(id, password) {
      await mustExist(id)
      checkPassword(password)
      await sql.run('UPDATE users SET password_hash = ? WHERE id = ?', [await hashPassword(password), id])
    },
    async remove(id) {
      await mustExist(id)
      await sql.run('DELETE FROM users WHERE id = ?', [id])
    },
    async createAppPassword(userId, name) {
      await mustExist(userId)
      const token = generateAppPassword()
      const created = Date.now()
      const { id } = (await sql.get<{ id: number }>(
        'INSERT INTO app_passwords (user_id, name, token_hash, created_ms) VALUES (?, ?, ?, ?) RETURNING id',
        [userId, name, sha256Hex(token), created],
      ))!
      return { token, info: { id, userId, name, createdMs: created } }
    },
    listAppPasswords: async (userId) =>
      (await sql.all<AppRow>('SELECT id, user_id, name, created_ms FROM app_passwords WHERE user_id = ? ORDER BY id', [userId])).map(toApp),
    async revokeAppPasswords(userId, id) {
      await mustExist(userId)
      const done =
        id === undefined
          ? await sql.run('DELETE FROM app_passwords WHERE user_id = ?', [userId])
          : await sql.run('DELETE FROM app_passwords WHERE user_id = ? AND id = ?', [userId, id])
      return done.changes
    },
    async verify(login, secret) {
      const r = isValidUserId(login) ? await row(login) : undefined
      if (!r) {
        dummyHash ??= hashPassword(randomBytes(16).toString('hex'))
        await verifyPassword(secret, await dummyHash)
        return undefined
      }
      // App passwords are random tokens: a sha256 lookup is enough and much cheaper than scrypt.
      if (await sql.get('SELECT id FROM app_passwords WHERE user_id = ? AND token_hash = ?', [r.id, sha256Hex(secret)])) return toUser(r)
      return (await verifyPassword(secret, r.password_hash)) ? toUser(r) : undefined
    },
  }
}
