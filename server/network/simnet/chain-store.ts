import { migrate, openDatabase, type Db } from '../../shared/db.ts'
import type { DealProposal } from '../types.ts'

/**
 * What the simulated chain must remember across restarts, and share between
 * the processes that look at it (the gateway proposes, the deal service
 * reads): when its clock was anchored (so the head does not jump back, and
 * every process sees the same head) and the deals proposed to it.
 * Everything else about a deal (publish delay, fate) is derived from the seed
 * and its id, so those three columns are enough to rebuild it.
 */
export interface SimChainStore {
  /** The first anchor ever saved, or `fallback` saved now. */
  anchorMs(fallback: number): number
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
  migrate(db, 'simnet.chain', STEPS)
  const getMeta = db.prepare('SELECT value FROM simnet_meta WHERE key = ?').pluck()
  const setMeta = db.prepare('INSERT OR IGNORE INTO simnet_meta (key, value) VALUES (?, ?)')
  const insert = db.prepare('INSERT OR REPLACE INTO simnet_deals (deal_id, proposal, proposed_epoch) VALUES (?, ?, ?)')
  const after = db.prepare('SELECT deal_id, proposal, proposed_epoch FROM simnet_deals WHERE deal_id > ? ORDER BY deal_id')
  return {
    anchorMs(fallback) {
      setMeta.run('anchor_ms', String(fallback))
      return Number(getMeta.get('anchor_ms'))
    },
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
