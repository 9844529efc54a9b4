import { hostname } from 'node:os'
import pg from 'pg'
import { createBackoff } from '../shared/disk.ts'
import type { Logger } from '../shared/logger.ts'
import { watchWrites, type Sql } from '../shared/sql/index.ts'
import { advisoryLockKey } from '../shared/sql/postgres.ts'
import { GatewayError } from './errors.ts'

export class DatabaseInUse extends Error {
  override name = 'DatabaseInUse'
}

/**
 * One gateway per database, as one per data folder: two would hand out the
 * same group ids and write the same groups' states. With DATABASE_URL the
 * gateway holds a PostgreSQL session advisory lock on a connection of its
 * own for the process's life; the server drops it when that connection goes,
 * so a dead gateway never leaves it stale.
 *
 * If the connection is lost while running, the gateway logs it once, refuses
 * writes (503) and tries to take the lock back with back-off; once it has it
 * again, everything goes on. Reads go on meanwhile. Should another gateway
 * have taken the lock in between, this one keeps refusing writes (and says so).
 */
export interface DatabaseLock {
  /** Whether this process holds the lock now (always, on SQLite: the data folder's lock is enough). */
  held(): boolean
  release(): Promise<void>
}

export const LOCK_NAME = 'gateway: one process per database'
const key = advisoryLockKey(LOCK_NAME)

export interface DatabaseLockOptions {
  url: string
  logger: Logger
  /** First and longest wait between attempts to take the lock back (default 1 s, 30 s). */
  retryMs?: { first: number; max: number }
  /** How often the lock's connection is checked (default 5 s): a silently dead one is found within this. */
  checkMs?: number
}

/** The lock for a gateway on SQLite: nothing to hold beyond the data folder's. */
export const noDatabaseLock: DatabaseLock = { held: () => true, release: async () => {} }

/** Takes the lock, or throws DatabaseInUse naming the holder. */
export async function lockDatabase(o: DatabaseLockOptions): Promise<DatabaseLock> {
  const retry = o.retryMs ?? { first: 1_000, max: 30_000 }
  const backoff = createBackoff(retry.first, retry.max)
  let client: pg.Client | undefined
  let holding = false
  let released = false
  let timer: NodeJS.Timeout | undefined

  /** A connection holding the lock, or undefined with the holder's name when another process has it. */
  async function take(): Promise<{ client?: pg.Client; holder?: string }> {
    const c = new pg.Client({ connectionString: o.url, keepAlive: true, application_name: `gateway pid ${process.pid} on ${hostname()}` })
    // Errors on an idle connection arrive here, not as a rejected query: never an uncaught 'error'.
    c.on('error', () => lost(c))
    await c.connect()
    try {
      const { rows } = await c.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [key])
      if (rows[0].locked) return { client: c }
      // Who holds it: its session's application_name (a gateway's says its pid and host).
      const holder = await c.query<{ name: string | null }>(
        "SELECT a.application_name AS name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.granted AND l.classid = 0 AND l.objid = $1 AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())",
        [key],
      )
      await c.end()
      return { holder: holder.rows[0]?.name || undefined }
    } catch (err) {
      await c.end().catch(() => {})
      throw err
    }
  }

  function lost(c: pg.Client): void {
    if (c !== client || released) return
    client = undefined
    holding = false
    c.end().catch(() => {})
    logger.error('lost the connection holding the database lock: writes are refused until it is taken back')
    schedule()
  }

  function schedule(): void {
    clearTimeout(timer)
    if (released) return
    timer = setTimeout(retake, backoff.fail())
    timer.unref()
  }

  async function retake(): Promise<void> {
    if (released) return
    try {
      const got = await take()
      if (released) {
        await got.client?.end().catch(() => {})
        return
      }
      if (!got.client) {
        if (backoff.failures === 1)
          logger.error({ holder: got.holder }, 'another gateway took the database lock meanwhile: this one keeps refusing writes')
        return schedule()
      }
      client = got.client
      holding = true
      backoff.reset()
      logger.info('database lock taken back: writes accepted again')
      watch()
    } catch {
      schedule()
    }
  }

  /** A cheap query now and then: a connection that died without a word is found within `checkMs`. */
  function watch(): void {
    clearTimeout(timer)
    timer = setTimeout(async () => {
      const c = client
      if (!c || released) return
      try {
        await c.query('SELECT 1')
        watch()
      } catch {
        lost(c)
      }
    }, o.checkMs ?? 5_000)
    timer.unref()
  }

  const logger = o.logger
  const first = await take()
  if (!first.client) {
    const holder = first.holder ? ` (${first.holder})` : ''
    throw new DatabaseInUse(
      `another gateway is running on this database${holder}: one gateway per DATABASE_URL; stop it or give this one its own database`,
    )
  }
  client = first.client
  holding = true
  watch()

  return {
    held: () => holding,
    async release() {
      released = true
      holding = false
      clearTimeout(timer)
      const c = client
      client = undefined
      // Ending the session ends its advisory lock.
      await c?.end().catch(() => {})
    },
  }
}

/** The error every write gets while the gateway does not hold the database lock. */
export const lockLost = () =>
  new GatewayError(
    503,
    'DATABASE_LOCK_LOST',
    'The gateway lost its hold on the database and refuses writes until it has it back; try again shortly',
    { 'Retry-After': '5' },
  )

/**
 * The store, refusing writes (a GatewayError 503) while `lock` is not held:
 * background work fails and retries as it does on any store error, requests
 * get the 503. Reads are never refused.
 */
export function fencedSql(sql: Sql, lock: DatabaseLock): Sql {
  return watchWrites(sql, {
    before: () => {
      if (!lock.held()) throw lockLost()
    },
  })
}
