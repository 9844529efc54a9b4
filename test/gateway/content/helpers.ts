import { createCipheriv, createHash } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { openSql, type Sql, type StoreLocation } from '../../../server/shared/sql/index.ts'
import { createContentStore, type ContentStore } from '../../../server/gateway/content/index.ts'
import type { CidProfile } from '../../../server/shared/cid-profile.ts'
import type { Faults } from '../../../server/shared/faults.ts'
import { DEFAULT_LISTING_WAIT_SECONDS } from '../../../server/shared/config.ts'

export const silentLogger = pino({ level: 'silent' })

/**
 * kubo's deterministic test bytes (test/cli/testutils/random_deterministic.go,
 * mirrored in js-ipfs-unixfs test/helpers/deterministic.ts): the ChaCha20
 * keystream with key sha256(seed), zero nonce, counter 0.
 */
export async function* kuboDeterministic(size: number, seed: string): AsyncGenerator<Uint8Array> {
  const key = createHash('sha256').update(seed).digest()
  // OpenSSL's chacha20 IV is 4 bytes of counter then the 12-byte nonce: all zero.
  const cipher = createCipheriv('chacha20', key, Buffer.alloc(16))
  const zeros = Buffer.alloc(1 << 20)
  for (let left = size; left > 0; left -= zeros.length) yield cipher.update(zeros.subarray(0, Math.min(left, zeros.length)))
}

export async function* chunksOf(bytes: Uint8Array, size = 65_536): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size)
  if (bytes.length === 0) return
}

export async function collect(source: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = []
  for await (const p of source) parts.push(p)
  return Buffer.concat(parts)
}

export interface TestStore {
  dir: string
  sql: Sql
  store: ContentStore
  reopen(options?: Partial<{ groupSize: number; groupIdleMs: number; listingWaitMs: number }>): Promise<ContentStore>
  cleanup(): Promise<void>
}

/**
 * A content store on a fresh temp dir, its records in a real SQLite file
 * there, or at `where` (a fresh store of the dialect under test).
 */
/**
 * A content store in a temp dir. Its files are cut as kubo-cid-v1 (256 KiB
 * leaves) unless `cidProfile` says otherwise: the store's own tests name
 * that layout's leaf boundaries; profiles are tested in unixfs-dag.test.ts.
 */
export async function makeStore(
  options: {
    groupSize?: number
    /** The largest CAR a storage route takes (a PDP upload); none by default. */
    maxCarBytes?: number
    groupIdleMs?: number
    /** How long a group of folders' listings only waits before it closes (default a day, as the gateway's). */
    listingWaitMs?: number
    sealThreads?: number
    where?: StoreLocation
    cidProfile?: CidProfile
    faults?: Faults
  } = {},
): Promise<TestStore> {
  const dir = mkdtempSync(join(tmpdir(), 'content-store-'))
  const where = options.where ?? { file: join(dir, 'gateway.sqlite'), schema: 'gateway' as const }
  const make = (sql: Sql, o: { groupSize?: number; groupIdleMs?: number; listingWaitMs?: number; sealThreads?: number }) =>
    createContentStore({
      sql,
      dir,
      groupSize: o.groupSize ?? 64 * 1024 * 1024,
      maxCarBytes: options.maxCarBytes,
      groupIdleMs: o.groupIdleMs ?? 60_000,
      listingWaitMs: o.listingWaitMs ?? DEFAULT_LISTING_WAIT_SECONDS * 1000,
      logger: silentLogger,
      sealThreads: o.sealThreads,
      cidProfile: options.cidProfile ?? 'kubo-cid-v1',
      faults: options.faults,
    })
  const sql = await openSql(where)
  const t: TestStore = {
    dir,
    sql,
    store: await make(sql, options),
    async reopen(o = {}) {
      await t.store.close()
      await t.sql.close()
      t.sql = await openSql(where)
      t.store = await make(t.sql, { ...options, ...o })
      return t.store
    },
    async cleanup() {
      await t.store.close()
      await t.sql.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
  return t
}
