import { jsonList, type Sql } from '../../shared/sql/index.ts'
import { createDealChanges } from './deal-changes.ts'
import { createPdpRates } from './pdp-rates.ts'
import { present, toDeal, type Row } from './deal-rows.ts'
import { LIVE_STATES, type GatewayDealState } from './deal-state.ts'
import { viewOf } from './deal-view.ts'
import { migrateDeals } from './schema.ts'
import type { DealAudit, DealStore, DealView, GroupDeal, NewDeal, RouteName } from './types.ts'

const LIVE = LIVE_STATES.map((s) => `'${s}'`).join(', ')

/** All SQL of the deal engine: one row per copy the gateway ever set out to make. Migrates first. */
export async function createDealStore(sql: Sql, now: () => number = Date.now): Promise<DealStore> {
  await migrateDeals(sql)
  const ids = jsonList(sql.dialect, 'integer')
  const all = async (text: string, params: unknown[] = []) => (await sql.all<Row>(text, params)).map(toDeal)
  /** `… AND route = ?` when a route is named. */
  const ofRoute = (route: RouteName | undefined) => (route ? [' AND route = ?', [route]] : ['', []]) as [string, unknown[]]

  const changes = createDealChanges(sql, now)

  const withAudit = async (r: Row): Promise<DealAudit> => ({
    ...toDeal(r),
    ...(present({ proposalCid: r.proposal_cid, providerAnswer: r.provider_answer }) as Partial<DealAudit>),
    ...(r.signed_proposal ? { signedProposal: new Uint8Array(r.signed_proposal) } : {}),
    events: (
      await sql.all<{ state: GatewayDealState; reason: string | null; at_ms: number }>(
        'SELECT state, reason, at_ms FROM group_deal_events WHERE deal_id = ? ORDER BY rowid',
        [r.id],
      )
    ).map((e) => ({ state: e.state, ...(e.reason ? { reason: e.reason } : {}), atMs: e.at_ms })),
  })

  const rates = createPdpRates(sql, now)

  return {
    create: (d: NewDeal): Promise<GroupDeal> =>
      sql.transaction(async (tx) => {
        const t = now()
        const row = (await tx.get<Row>(
          `INSERT INTO group_deals (group_id, route, provider, piece_cid, state, start_epoch, end_epoch, token_hash, proposal_epoch, transfer_size, created_ms, updated_ms)
           VALUES (?, ?, ?, ?, 'proposing', ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
          [
            d.groupId,
            d.route,
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
        await tx.run('INSERT INTO group_deal_events (deal_id, state, reason, at_ms) VALUES (?, ?, ?, ?)', [row.id, 'proposing', null, t])
        return toDeal(row)
      }),
    async recordSent(id, sent) {
      await sql.run('UPDATE group_deals SET signed_proposal = ?, proposal_cid = ?, provider_answer = ? WHERE id = ?', [
        sent.signedProposal ?? null,
        sent.proposalCid ?? null,
        sent.answer,
        id,
      ])
    },
    get: async (id) => {
      const r = await sql.get<Row>('SELECT * FROM group_deals WHERE id = ?', [id])
      return r && toDeal(r)
    },
    ofGroup: (groupId, route) => {
      const [and, params] = ofRoute(route)
      return all(`SELECT * FROM group_deals WHERE group_id = ?${and} ORDER BY id`, [groupId, ...params])
    },
    liveOfGroup: (groupId, route) => {
      const [and, params] = ofRoute(route)
      return all(`SELECT * FROM group_deals WHERE group_id = ? AND state IN (${LIVE})${and} ORDER BY id`, [groupId, ...params])
    },
    inState: (state, route) => {
      const [and, params] = ofRoute(route)
      return all(`SELECT * FROM group_deals WHERE state = ?${and} ORDER BY id`, [state, ...params])
    },
    ...changes,
    async audit(groupId) {
      const rows =
        groupId === undefined
          ? await sql.all<Row>('SELECT * FROM group_deals ORDER BY id')
          : await sql.all<Row>('SELECT * FROM group_deals WHERE group_id = ? ORDER BY id', [groupId])
      return Promise.all(rows.map(withAudit))
    },
    async auditOf(dealUuid) {
      const r = await sql.get<Row>('SELECT * FROM group_deals WHERE proposal_id = ?', [dealUuid])
      return r && withAudit(r)
    },
    ...rates,
    view: async (groupId): Promise<DealView> => viewOf(await all('SELECT * FROM group_deals WHERE group_id = ? ORDER BY id', [groupId])),
    async views(groupIds) {
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
