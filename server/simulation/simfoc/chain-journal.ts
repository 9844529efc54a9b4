import { migrateSqlite, openDatabase, type Db } from '../../shared/sql/index.ts'

type Hex = `0x${string}`

/** One thing that changed the simulated chain's state, at the epoch it happened. */
export type ChainEntry =
  | { epoch: number; kind: 'tx'; raw: Hex }
  /** FIL credited outside a transaction (genesis allocations). */
  | { epoch: number; kind: 'balance'; address: Hex; wei: bigint }
  /**
   * A contract created at a fixed address outside any transaction: the pre-history of a
   * simulated chain that stands as calibration or mainnet does, whose contracts sit at the
   * addresses published there (evm-chain-vm.ts place). `initcode` runs as if `from` deployed it.
   */
  | { epoch: number; kind: 'place'; address: Hex; from: Hex; initcode: Hex }

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
      (all.all() as { epoch: number; kind: string; body: string }[]).map((r): ChainEntry => {
        if (r.kind === 'tx') return { epoch: r.epoch, kind: 'tx', raw: r.body as Hex }
        if (r.kind === 'place') {
          const [address, from, initcode] = r.body.split(' ') as Hex[]
          return { epoch: r.epoch, kind: 'place', address, from, initcode }
        }
        const [address, wei] = r.body.split(' ')
        return { epoch: r.epoch, kind: 'balance', address: address as Hex, wei: BigInt(wei) }
      }),
    append(entry) {
      insert.run(entry.epoch, entry.kind, bodyOf(entry))
    },
    close: () => db.close(),
  }
}

function bodyOf(entry: ChainEntry): string {
  if (entry.kind === 'tx') return entry.raw
  if (entry.kind === 'place') return `${entry.address} ${entry.from} ${entry.initcode}`
  return `${entry.address} ${entry.wei}`
}
