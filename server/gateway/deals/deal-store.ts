import { jsonList, type Sql } from '../../shared/sql/index.ts'
import type { Deal } from '../content/index.ts'
import { DEAL_TRANSITIONS, LIVE_STATES, shownState, type GatewayDealState } from './deal-state.ts'
import { failedDealsOf } from './failed-deals.ts'
import { migrateDeals } from './schema.ts'
import type { DealAudit, DealStore, DealView, GroupDeal, NewDeal, StorageRoute } from './types.ts'

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
  transfer_size: number | null
  route: StorageRoute
  data_set_id: number | null
  piece_id: number | null
  added_epoch: number | null
  retrieval_url: string | null
  last_proof_epoch: number | null
  signed_proposal: Uint8Array | null
  proposal_cid: string | null
  provider_answer: string | null
  created_ms: number
  updated_ms: number
}

const toDeal = (r: Row): GroupDeal => ({
  id: r.id,
  groupId: r.group_id,
  route: r.route,
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
  ...(r.transfer_size != null ? { transferSize: r.transfer_size } : {}),
  ...(r.data_set_id != null ? { dataSetId: r.data_set_id } : {}),
  ...(r.piece_id != null ? { pieceId: r.piece_id } : {}),
  ...(r.added_epoch != null ? { addedEpoch: r.added_epoch } : {}),
  ...(r.retrieval_url ? { retrievalUrl: r.retrieval_url } : {}),
  ...(r.last_proof_epoch != null ? { lastProofEpoch: r.last_proof_epoch } : {}),
  createdMs: r.created_ms,
  updatedMs: r.updated_ms,
})

/** For each target state, the states a deal may move to it from. */
const FROM = Object.fromEntries(
  (Object.keys(DEAL_TRANSITIONS) as GatewayDealState[]).map((to) => [
    to,
    (Object.keys(DEAL_TRANSITIONS) as GatewayDealState[]).filter((from) => DEAL_TRANSITIONS[from].includes(to)),
  ]),
) as Record<GatewayDealState, GatewayDealState[]>

const inList = (states: readonly string[]) => states.map((s) => `'${s}'`).join(', ')

/** All SQL of the deal engine: one row per proposal the gateway ever made. Migrates first. */
export async function createDealStore(sql: Sql, now: () => number = Date.now): Promise<DealStore> {
  await migrateDeals(sql)
  const live = inList(LIVE_STATES)
  const ids = jsonList(sql.dialect, 'integer')
  const all = async (text: string, params: unknown[] = []) => (await sql.all<Row>(text, params)).map(toDeal)
  const event = (q: Sql, id: number, state: GatewayDealState, reason: string | null, t: number) =>
    q.run('INSERT INTO group_deal_events (deal_id, state, reason, at_ms) VALUES (?, ?, ?, ?)', [id, state, reason, t])

  /**
   * Moves a deal to `to` if DEAL_TRANSITIONS allows it from where it is, and
   * records the change, in one transaction; false (nothing written) otherwise.
   * The move is one conditional UPDATE (`… AND state IN (allowed)`): of two
   * racing transitions of one deal, on SQLite or on PostgreSQL's pool, exactly
   * one changes the row and the other finds it moved and does nothing.
   */
  const transition = (id: number, to: GatewayDealState, set: string, params: unknown[], reason?: string): Promise<boolean> =>
    sql.transaction(async (tx) => {
      const t = now()
      const { changes } = await tx.run(
        `UPDATE group_deals SET state = '${to}', ${set}updated_ms = ? WHERE id = ? AND state IN (${inList(FROM[to]) || 'NULL'})`,
        [...params, t, id],
      )
      if (changes === 0) return false
      await event(tx, id, to, reason ?? null, t)
      return true
    })
  /** A deal that failed or ended: its reason kept, its transfer token and retrievability gone. */
  const finish = (id: number, to: 'failed' | 'ended', reason: string) =>
    transition(id, to, 'reason = ?, token_hash = NULL, retrievable = 0, ', [reason], reason)
  const liveOfGroup = (groupId: number) => all(`SELECT * FROM group_deals WHERE group_id = ? AND state IN (${live}) ORDER BY id`, [groupId])

  const withAudit = async (r: Row): Promise<DealAudit> => ({
    ...toDeal(r),
    ...(r.signed_proposal ? { signedProposal: new Uint8Array(r.signed_proposal) } : {}),
    ...(r.proposal_cid ? { proposalCid: r.proposal_cid } : {}),
    ...(r.provider_answer ? { providerAnswer: r.provider_answer } : {}),
    events: (
      await sql.all<{ state: GatewayDealState; reason: string | null; at_ms: number }>(
        'SELECT state, reason, at_ms FROM group_deal_events WHERE deal_id = ? ORDER BY rowid',
        [r.id],
      )
    ).map((e) => ({
      state: e.state,
      ...(e.reason ? { reason: e.reason } : {}),
      atMs: e.at_ms,
    })),
  })

  /** What /file-info shows of a group, from all its deals: the live ones, how many are retrievable, and the ones providers failed. */
  const viewOf = (deals: GroupDeal[]): DealView => {
    const shown: Deal[] = []
    for (const d of deals) {
      const state = shownState(d.state)
      if (!state) continue
      const pdp =
        d.route === 'pdp'
          ? {
              route: 'pdp' as const,
              ...(d.dataSetId !== undefined ? { dataSetId: d.dataSetId } : {}),
              ...(d.pieceId !== undefined ? { pieceId: d.pieceId } : {}),
              ...(d.lastProofEpoch !== undefined ? { lastProofEpoch: d.lastProofEpoch } : {}),
            }
          : {}
      shown.push({
        provider: d.provider,
        state,
        dealId: d.dealId ?? 0,
        endEpoch: d.endEpoch,
        isRetrievable: d.state === 'active' && d.retrievable,
        ...pdp,
      })
    }
    const failedDeals = failedDealsOf(deals)
    return {
      deals: shown,
      retrievableCopies: shown.filter((d) => d.isRetrievable).length,
      ...(failedDeals.length > 0 ? { failedDeals } : {}),
    }
  }

  return {
    create: (d: NewDeal): Promise<GroupDeal> =>
      sql.transaction(async (tx) => {
        const t = now()
        const row = (await tx.get<Row>(
          `INSERT INTO group_deals (group_id, route, provider, piece_cid, state, start_epoch, end_epoch, token_hash, proposal_epoch, transfer_size, created_ms, updated_ms)
           VALUES (?, ?, ?, ?, 'proposing', ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
          [
            d.groupId,
            d.route ?? 'market',
            d.provider,
            d.pieceCid,
            d.startEpoch,
            d.endEpoch,
            d.tokenHash ?? null,
            d.proposalEpoch,
            d.transferSize ?? null,
            t,
            t,
          ],
        ))!
        await event(tx, row.id, 'proposing', null, t)
        return toDeal(row)
      }),
    async recordSent(id: number, sent: { signedProposal?: Uint8Array; proposalCid?: string; answer: string }): Promise<void> {
      await sql.run('UPDATE group_deals SET signed_proposal = ?, proposal_cid = ?, provider_answer = ? WHERE id = ?', [
        sent.signedProposal ?? null,
        sent.proposalCid ?? null,
        sent.answer,
        id,
      ])
    },
    get: async (id: number) => {
      const r = await sql.get<Row>('SELECT * FROM group_deals WHERE id = ?', [id])
      return r && toDeal(r)
    },
    ofGroup: (groupId: number) => all('SELECT * FROM group_deals WHERE group_id = ? ORDER BY id', [groupId]),
    liveOfGroup,
    inState: (state: GatewayDealState, route?: StorageRoute) =>
      route
        ? all('SELECT * FROM group_deals WHERE state = ? AND route = ? ORDER BY id', [state, route])
        : all('SELECT * FROM group_deals WHERE state = ? ORDER BY id', [state]),
    markAccepted: (id: number, proposalId: string) => transition(id, 'proposed', 'proposal_id = ?, ', [proposalId]),
    markPublished: (id: number, dealId: number) =>
      transition(id, 'published', 'deal_id = ?, token_hash = NULL, ', [dealId], `deal ${dealId}`),
    markActive: (id: number) => transition(id, 'active', '', []),
    markFailed: (id: number, reason: string) => finish(id, 'failed', reason),
    markEnded: (id: number, reason: string) => finish(id, 'ended', reason),
    async recordPdpCopy(id, copy): Promise<void> {
      await sql.run(
        'UPDATE group_deals SET data_set_id = ?, piece_id = ?, added_epoch = ?, retrieval_url = ?, updated_ms = ? WHERE id = ?',
        [copy.dataSetId, copy.pieceId, copy.addedEpoch, copy.retrievalUrl, now(), id],
      )
    },
    async recordProof(id, proof): Promise<void> {
      await sql.run('UPDATE group_deals SET last_proof_epoch = COALESCE(?, last_proof_epoch), end_epoch = ?, updated_ms = ? WHERE id = ?', [
        proof.lastProofEpoch ?? null,
        proof.endEpoch,
        now(),
        id,
      ])
    },
    async recordCheck(id: number, ok: boolean): Promise<void> {
      const t = now()
      await sql.run('UPDATE group_deals SET retrievable = ?, checked_ms = ?, updated_ms = ? WHERE id = ?', [ok ? 1 : 0, t, t, id])
    },
    async failInterrupted(): Promise<number> {
      let n = 0
      for (const { id } of await sql.all<{ id: number }>(`SELECT id FROM group_deals WHERE state = 'proposing'`)) {
        if (await finish(id, 'failed', 'INTERRUPTED')) n++
      }
      return n
    },

    async audit(groupId?: number): Promise<DealAudit[]> {
      const rows =
        groupId === undefined
          ? await sql.all<Row>('SELECT * FROM group_deals ORDER BY id')
          : await sql.all<Row>('SELECT * FROM group_deals WHERE group_id = ? ORDER BY id', [groupId])
      return Promise.all(rows.map(withAudit))
    },
    async auditOf(dealUuid: string): Promise<DealAudit | undefined> {
      const r = await sql.get<Row>('SELECT * FROM group_deals WHERE proposal_id = ?', [dealUuid])
      return r && withAudit(r)
    },

    view: async (groupId: number): Promise<DealView> =>
      viewOf(await all('SELECT * FROM group_deals WHERE group_id = ? ORDER BY id', [groupId])),
    async views(groupIds?: number[]): Promise<Map<number, DealView>> {
      // Every deal, failed and ended ones too: the view lists the failures and whether a later deal replaced each.
      const deals = groupIds
        ? await all(`SELECT * FROM group_deals WHERE group_id IN (${ids}) ORDER BY id`, [JSON.stringify(groupIds)])
        : await all('SELECT * FROM group_deals ORDER BY id')
      const byGroup = new Map<number, GroupDeal[]>()
      for (const d of deals) {
        const list = byGroup.get(d.groupId)
        if (list) list.push(d)
        else byGroup.set(d.groupId, [d])
      }
      const views = [...byGroup].map(([id, list]) => [id, viewOf(list)] as const)
      // A group whose only deals were refused shows nothing, as one without deals.
      return new Map(views.filter(([, v]) => v.deals.length > 0 || v.failedDeals))
    },
  }
}
