import type { Db } from '../../shared/db.ts'
import type { Deal } from '../content/index.ts'
import { DEAL_TRANSITIONS, LIVE_STATES, shownState, type GatewayDealState } from './deal-state.ts'
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
  /** Head epoch when the proposal was made. */
  proposalEpoch?: number
  createdMs: number
  updatedMs: number
}

/** One deal as `npm run deals` shows it: the row, what was signed and answered, and its history. */
export interface DealAudit extends GroupDeal {
  /** The signed proposal (market.ClientDealProposal) as CBOR, exactly as sent. */
  signedProposal?: Uint8Array
  proposalCid?: string
  providerAnswer?: string
  events: { state: GatewayDealState; reason?: string; atMs: number }[]
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
  proposal_epoch: number | null
  signed_proposal: Uint8Array | null
  proposal_cid: string | null
  provider_answer: string | null
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
  ...(r.proposal_epoch != null ? { proposalEpoch: r.proposal_epoch } : {}),
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
  proposalEpoch: number
}

/** All SQL of the deal engine: one row per proposal the gateway ever made. */
export function createDealStore(db: Db, now: () => number = Date.now) {
  migrateDeals(db)
  const live = LIVE_STATES.map((s) => `'${s}'`).join(',')
  const q = {
    insert: db.prepare(`INSERT INTO group_deals (group_id, provider, piece_cid, state, start_epoch, end_epoch, token_hash, proposal_epoch, created_ms, updated_ms)
      VALUES (?, ?, ?, 'proposing', ?, ?, ?, ?, ?, ?)`),
    event: db.prepare('INSERT INTO group_deal_events (deal_id, state, reason, at_ms) VALUES (?, ?, ?, ?)'),
    events: db.prepare('SELECT state, reason, at_ms FROM group_deal_events WHERE deal_id = ? ORDER BY rowid'),
    sent: db.prepare('UPDATE group_deals SET signed_proposal = ?, proposal_cid = ?, provider_answer = ? WHERE id = ?'),
    byProposalId: db.prepare('SELECT * FROM group_deals WHERE proposal_id = ?'),
    list: db.prepare('SELECT * FROM group_deals WHERE ? IS NULL OR group_id = ? ORDER BY id'),
    get: db.prepare('SELECT * FROM group_deals WHERE id = ?'),
    ofGroup: db.prepare('SELECT * FROM group_deals WHERE group_id = ? ORDER BY id'),
    inState: db.prepare('SELECT * FROM group_deals WHERE state = ? ORDER BY id'),
    liveOfGroup: db.prepare(`SELECT * FROM group_deals WHERE group_id = ? AND state IN (${live}) ORDER BY id`),
    state: db.prepare('SELECT state FROM group_deals WHERE id = ?').pluck(),
    accepted: db.prepare(`UPDATE group_deals SET state = 'proposed', proposal_id = ?, updated_ms = ? WHERE id = ?`),
    published: db.prepare(`UPDATE group_deals SET state = 'published', deal_id = ?, token_hash = NULL, updated_ms = ? WHERE id = ?`),
    active: db.prepare(`UPDATE group_deals SET state = 'active', updated_ms = ? WHERE id = ?`),
    finish: db.prepare(`UPDATE group_deals SET state = ?, reason = ?, token_hash = NULL, retrievable = 0, updated_ms = ? WHERE id = ?`),
    checked: db.prepare('UPDATE group_deals SET retrievable = ?, checked_ms = ?, updated_ms = ? WHERE id = ?'),
    interrupted: db.prepare(`SELECT id FROM group_deals WHERE state = 'proposing'`).pluck(),
  }
  const all = (rows: unknown[]) => (rows as Row[]).map(toDeal)

  /**
   * Moves a deal to `to` if DEAL_TRANSITIONS allows it from where it is, and
   * records the change, in one transaction; false (nothing written) otherwise.
   */
  const transition = db.transaction((id: number, to: GatewayDealState, apply: (t: number) => void, reason?: string): boolean => {
    const from = q.state.get(id) as GatewayDealState | undefined
    if (!from || !DEAL_TRANSITIONS[from].includes(to)) return false
    const t = now()
    apply(t)
    q.event.run(id, to, reason ?? null, t)
    return true
  })

  const withAudit = (r: Row): DealAudit => ({
    ...toDeal(r),
    ...(r.signed_proposal ? { signedProposal: new Uint8Array(r.signed_proposal) } : {}),
    ...(r.proposal_cid ? { proposalCid: r.proposal_cid } : {}),
    ...(r.provider_answer ? { providerAnswer: r.provider_answer } : {}),
    events: (q.events.all(r.id) as { state: GatewayDealState; reason: string | null; at_ms: number }[]).map((e) => ({
      state: e.state,
      ...(e.reason ? { reason: e.reason } : {}),
      atMs: e.at_ms,
    })),
  })

  return {
    /** Records a proposal before it is sent, so a crash mid-call leaves a trace. */
    create: db.transaction((d: NewDeal): GroupDeal => {
      const t = now()
      const id = Number(q.insert.run(d.groupId, d.provider, d.pieceCid, d.startEpoch, d.endEpoch, d.tokenHash, d.proposalEpoch, t, t).lastInsertRowid)
      q.event.run(id, 'proposing', null, t)
      return toDeal(q.get.get(id) as Row)
    }),
    /** What was sent and answered: the signed proposal's CBOR, its CID, the provider's words. */
    recordSent(id: number, sent: { signedProposal?: Uint8Array; proposalCid?: string; answer: string }) {
      q.sent.run(sent.signedProposal ?? null, sent.proposalCid ?? null, sent.answer, id)
    },
    get: (id: number) => {
      const r = q.get.get(id) as Row | undefined
      return r && toDeal(r)
    },
    ofGroup: (groupId: number) => all(q.ofGroup.all(groupId)),
    liveOfGroup: (groupId: number) => all(q.liveOfGroup.all(groupId)),
    inState: (state: GatewayDealState) => all(q.inState.all(state)),
    markAccepted: (id: number, proposalId: string) => transition(id, 'proposed', (t) => q.accepted.run(proposalId, t, id)),
    markPublished: (id: number, dealId: number) => transition(id, 'published', (t) => q.published.run(dealId, t, id), `deal ${dealId}`),
    markActive: (id: number) => transition(id, 'active', (t) => q.active.run(t, id)),
    markFailed: (id: number, reason: string) => transition(id, 'failed', (t) => q.finish.run('failed', reason, t, id), reason),
    markEnded: (id: number, reason: string) => transition(id, 'ended', (t) => q.finish.run('ended', reason, t, id), reason),
    recordCheck: (id: number, ok: boolean) => {
      const t = now()
      q.checked.run(ok ? 1 : 0, t, t, id)
    },
    /** Proposals in flight when the process died: the provider's answer is lost, so they count as failed. */
    failInterrupted: (): number => {
      let n = 0
      for (const id of q.interrupted.all() as number[]) if (transition(id, 'failed', (t) => q.finish.run('failed', 'INTERRUPTED', t, id), 'INTERRUPTED')) n++
      return n
    },

    /** Deals with their audit trail, oldest first (all, or one group's). */
    audit(groupId?: number): DealAudit[] {
      return (q.list.all(groupId ?? null, groupId ?? null) as Row[]).map(withAudit)
    },
    /** One deal by its deal UUID (the proposal id sent to the provider). */
    auditOf(dealUuid: string): DealAudit | undefined {
      const r = q.byProposalId.get(dealUuid) as Row | undefined
      return r && withAudit(r)
    },

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
