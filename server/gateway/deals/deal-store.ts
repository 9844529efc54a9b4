import type { Db } from '../../shared/db.ts'
import type { Deal } from '../content/index.ts'
import { LIVE_STATES, shownState, type GatewayDealState } from './deal-state.ts'
import { migrateDeals } from './schema.ts'

export interface GroupDeal {
  id: number
  groupId: number
  provider: string
  pieceCid: string
  state: GatewayDealState
  proposalId?: string
  dealId?: number
  startEpoch: number
  endEpoch: number
  tokenHash?: string
  reason?: string
  retrievable: boolean
  checkedMs?: number
  createdMs: number
  updatedMs: number
}

interface Row {
  id: number
  group_id: number
  provider: string
  piece_cid: string
  state: GatewayDealState
  proposal_id: string | null
  deal_id: number | null
  start_epoch: number
  end_epoch: number
  token_hash: string | null
  reason: string | null
  retrievable: number
  checked_ms: number | null
  created_ms: number
  updated_ms: number
}

const toDeal = (r: Row): GroupDeal => ({
  id: r.id,
  groupId: r.group_id,
  provider: r.provider,
  pieceCid: r.piece_cid,
  state: r.state,
  ...(r.proposal_id ? { proposalId: r.proposal_id } : {}),
  ...(r.deal_id != null ? { dealId: r.deal_id } : {}),
  startEpoch: r.start_epoch,
  endEpoch: r.end_epoch,
  ...(r.token_hash ? { tokenHash: r.token_hash } : {}),
  ...(r.reason ? { reason: r.reason } : {}),
  retrievable: r.retrievable === 1,
  ...(r.checked_ms != null ? { checkedMs: r.checked_ms } : {}),
  createdMs: r.created_ms,
  updatedMs: r.updated_ms,
})

export interface NewDeal {
  groupId: number
  provider: string
  pieceCid: string
  startEpoch: number
  endEpoch: number
  tokenHash: string
}

/** All SQL of the deal engine: one row per proposal the gateway ever made. */
export function createDealStore(db: Db, now: () => number = Date.now) {
  migrateDeals(db)
  const live = LIVE_STATES.map((s) => `'${s}'`).join(',')
  const q = {
    insert: db.prepare(`INSERT INTO group_deals (group_id, provider, piece_cid, state, start_epoch, end_epoch, token_hash, created_ms, updated_ms)
      VALUES (?, ?, ?, 'proposing', ?, ?, ?, ?, ?)`),
    get: db.prepare('SELECT * FROM group_deals WHERE id = ?'),
    ofGroup: db.prepare('SELECT * FROM group_deals WHERE group_id = ? ORDER BY id'),
    inState: db.prepare('SELECT * FROM group_deals WHERE state = ? ORDER BY id'),
    liveOfGroup: db.prepare(`SELECT * FROM group_deals WHERE group_id = ? AND state IN (${live}) ORDER BY id`),
    accepted: db.prepare(`UPDATE group_deals SET state = 'proposed', proposal_id = ?, updated_ms = ? WHERE id = ? AND state = 'proposing'`),
    published: db.prepare(`UPDATE group_deals SET state = 'published', deal_id = ?, token_hash = NULL, updated_ms = ? WHERE id = ?`),
    active: db.prepare(`UPDATE group_deals SET state = 'active', updated_ms = ? WHERE id = ?`),
    finish: db.prepare(`UPDATE group_deals SET state = ?, reason = ?, token_hash = NULL, retrievable = 0, updated_ms = ? WHERE id = ?`),
    checked: db.prepare('UPDATE group_deals SET retrievable = ?, checked_ms = ?, updated_ms = ? WHERE id = ?'),
    failInterrupted: db.prepare(`UPDATE group_deals SET state = 'failed', reason = 'INTERRUPTED', token_hash = NULL, updated_ms = ? WHERE state = 'proposing'`),
  }
  const all = (rows: unknown[]) => (rows as Row[]).map(toDeal)

  return {
    /** Records a proposal before it is sent, so a crash mid-call leaves a trace. */
    create(d: NewDeal): GroupDeal {
      const t = now()
      const id = Number(q.insert.run(d.groupId, d.provider, d.pieceCid, d.startEpoch, d.endEpoch, d.tokenHash, t, t).lastInsertRowid)
      return toDeal(q.get.get(id) as Row)
    },
    get: (id: number) => {
      const r = q.get.get(id) as Row | undefined
      return r && toDeal(r)
    },
    ofGroup: (groupId: number) => all(q.ofGroup.all(groupId)),
    liveOfGroup: (groupId: number) => all(q.liveOfGroup.all(groupId)),
    inState: (state: GatewayDealState) => all(q.inState.all(state)),
    markAccepted: (id: number, proposalId: string) => void q.accepted.run(proposalId, now(), id),
    markPublished: (id: number, dealId: number) => void q.published.run(dealId, now(), id),
    markActive: (id: number) => void q.active.run(now(), id),
    markFailed: (id: number, reason: string) => void q.finish.run('failed', reason, now(), id),
    markEnded: (id: number, reason: string) => void q.finish.run('ended', reason, now(), id),
    recordCheck: (id: number, ok: boolean) => {
      const t = now()
      q.checked.run(ok ? 1 : 0, t, t, id)
    },
    /** Proposals in flight when the process died: the provider's answer is lost, so they count as failed. */
    failInterrupted: () => q.failInterrupted.run(now()).changes,

    /** What /file-info shows of a group: its live deals and how many are retrievable. */
    view(groupId: number): { deals: Deal[]; retrievableCopies: number } {
      const deals: Deal[] = []
      for (const d of all(q.liveOfGroup.all(groupId))) {
        const state = shownState(d.state)
        if (!state) continue
        deals.push({ provider: d.provider, state, dealId: d.dealId ?? 0, endEpoch: d.endEpoch, isRetrievable: d.state === 'active' && d.retrievable })
      }
      return { deals, retrievableCopies: deals.filter((d) => d.isRetrievable).length }
    },
  }
}

export type DealStore = ReturnType<typeof createDealStore>
