import { migrateSqlite, openDatabase, type Db } from '../../shared/sql/index.ts'

type Hex = `0x${string}`

/** One thing that changed the simulated chain's state, at the epoch it happened. */
export type ChainEntry =
  | { epoch: number; kind: 'tx'; raw: Hex }
  /** FIL credited outside a transaction (genesis allocations, the simulation's faucet). */
  | { epoch: number; kind: 'balance'; address: Hex; wei: bigint }

/**
 * What the simulated Onchain Cloud's chain must remember across restarts: every
 * state change in order. Replaying them through the same EVM rebuilds the
 * state, receipts and logs exactly, so data sets, rails and proofs outlive the
 * process as they outlive a real node's restart.
 */
export interface ChainJournal {
  entries(): ChainEntry[]
  append(entry: ChainEntry): void
  close(): void
}

const STEPS = [
  `CREATE TABLE simfoc_journal (seq INTEGER PRIMARY KEY AUTOINCREMENT, epoch INTEGER NOT NULL, kind TEXT NOT NULL, body TEXT NOT NULL);`,
]

export function openChainJournal(file: string): ChainJournal {
  const db: Db = openDatabase(file)
  migrateSqlite(db, 'simfoc.journal', STEPS)
  const insert = db.prepare('INSERT INTO simfoc_journal (epoch, kind, body) VALUES (?, ?, ?)')
  const all = db.prepare('SELECT epoch, kind, body FROM simfoc_journal ORDER BY seq')
  return {
    entries: () =>
      (all.all() as { epoch: number; kind: string; body: string }[]).map((r) => {
        if (r.kind === 'tx') return { epoch: r.epoch, kind: 'tx', raw: r.body as Hex }
        const [address, wei] = r.body.split(' ')
        return { epoch: r.epoch, kind: 'balance', address: address as Hex, wei: BigInt(wei) }
      }),
    append(entry) {
      insert.run(entry.epoch, entry.kind, entry.kind === 'tx' ? entry.raw : `${entry.address} ${entry.wei}`)
    },
    close: () => db.close(),
  }
}
