import { immediate, migrateSqlite, openDatabase, type Db } from '../../shared/sql/index.ts'
import { EPOCH_SECONDS, spedUpClock, type NetworkClock } from '../../shared/epochs.ts'
import type { DealProposal } from '../../shared/chain.ts'

/**
 * What the simulated chain must remember across restarts, and share between
 * the processes that look at it (the gateway proposes, the deal service
 * reads): its clock (so the head does not jump back, and every process sees
 * the same head) and the deals proposed to it.
 * Everything else about a deal (publish delay, fate) is derived from the seed
 * and its id, so those three columns are enough to rebuild it.
 */
export interface SimChainStore {
  /**
   * The chain's clock at `speed`: the one saved, or one anchored at `nowMs`
   * on first use. A new speed re-anchors at the current head, so that
   * changing SIMNET_SPEED between runs never moves the head back.
   */
  clock(genesis: number, speed: number, nowMs: number): NetworkClock
  saveDeal(dealId: number, proposal: DealProposal, proposedEpoch: number): void
  /** The saved deals with an id above `afterId`, in id order (all of them by default). */
  deals(afterId?: number): { dealId: number; proposal: DealProposal; proposedEpoch: number }[]
  close(): void
}

const STEPS = [
  `CREATE TABLE simnet_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
   CREATE TABLE simnet_deals (deal_id INTEGER PRIMARY KEY, proposal TEXT NOT NULL, proposed_epoch INTEGER NOT NULL);`,
]

export function openSimChainStore(file: string): SimChainStore {
  const db: Db = openDatabase(file)
  migrateSqlite(db, 'simnet.chain', STEPS)
  const meta = db.prepare('SELECT value FROM simnet_meta WHERE key = ?')
  const getMeta = (key: string) => (meta.get(key) as { value: string } | undefined)?.value
  const saveMeta = db.prepare('INSERT OR REPLACE INTO simnet_meta (key, value) VALUES (?, ?)')
  const insert = db.prepare('INSERT OR REPLACE INTO simnet_deals (deal_id, proposal, proposed_epoch) VALUES (?, ?, ?)')
  const after = db.prepare('SELECT deal_id, proposal, proposed_epoch FROM simnet_deals WHERE deal_id > ? ORDER BY deal_id')
  return {
    clock: (genesis, speed, nowMs) =>
      immediate(db, () => {
        const saved = getMeta('clock')
        const old = saved ? (JSON.parse(saved) as NetworkClock) : undefined
        if (old && Math.abs(EPOCH_SECONDS / old.epochSeconds - speed) < 1e-9) return old
        const now = nowMs / 1000
        // Where the head is now on the saved clock; a chain saved before clocks were kept was anchored by `anchor_ms`.
        const legacyAnchor = getMeta('anchor_ms')
        let clock = spedUpClock(genesis, speed, legacyAnchor && !old ? Number(legacyAnchor) / 1000 : now)
        if (old) {
          const epochSeconds = EPOCH_SECONDS / speed
          clock = { name: 'simnet', epochSeconds, genesis: now - ((now - old.genesis) / old.epochSeconds) * epochSeconds }
        }
        saveMeta.run('clock', JSON.stringify(clock))
        return clock
      }),
    saveDeal(dealId, proposal, proposedEpoch) {
      insert.run(dealId, JSON.stringify(proposal), proposedEpoch)
    },
    deals: (afterId = -1) =>
      (after.all(afterId) as { deal_id: number; proposal: string; proposed_epoch: number }[]).map((r) => ({
        dealId: r.deal_id,
        proposal: JSON.parse(r.proposal) as DealProposal,
        proposedEpoch: r.proposed_epoch,
      })),
    close: () => db.close(),
  }
}
