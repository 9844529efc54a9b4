import type { Db } from '../shared/db.ts'
import type { OnChainDealState, OnChainDealStatus } from '../network/deal-status.ts'
import type { DealProposal } from '../network/types.ts'
import { badRequest } from './errors.ts'

export type DealSort = 'dealId' | 'lastUpdate'
export const PAGE_SIZE = 10_000
const CHUNK_ROWS = 250

export interface StoredDeal {
  dealId: number
  lastUpdateMs: number
  proposal: DealProposal
  state: OnChainDealState
}

export interface DealPage {
  /** The page's `result` object, already serialised in page order. */
  resultJson: string
  /** Number of chunks (not deals). */
  count: number
  next: string | null
}

/**
 * Cursors. `dealId` sort: the last deal's id ("123456"). `lastUpdate` sort: the
 * last deal's id and its lastUpdate in integer milliseconds, "123456@1717171717123",
 * because many deals share a lastUpdate and a deal's lastUpdate can change between
 * pages; a bare id is also accepted there and resolved to that deal's current lastUpdate.
 */
export function encodeCursor(sort: DealSort, deal: { dealId: number; lastUpdateMs: number }): string {
  return sort === 'dealId' ? String(deal.dealId) : `${deal.dealId}@${deal.lastUpdateMs}`
}

export interface DealStore {
  /**
   * One page as JSON fragments (`"<id>":{…}` joined by commas), a few hundred
   * deals each, in page order; returns the `next` cursor (null when empty).
   * Throws a 400 on the first step for a bad cursor.
   */
  pageChunks(tenantId: number, sort: DealSort, cursor: string | null, pageSize?: number, chunkRows?: number): Generator<string, string | null>
  /** The whole page at once (small pages, tests). */
  page(tenantId: number, sort: DealSort, cursor: string | null, pageSize?: number): DealPage
  /** Writes a deal if it is new or its on-chain state changed; returns whether it did. */
  upsert(tenantId: number, deal: { dealId: number; proposal: DealProposal; state: OnChainDealState }, nowMs: number): boolean
  /** Fast bulk load for benchmarks and seeding (no change detection). */
  insertMany(tenantId: number, deals: StoredDeal[]): void
  /** Providers holding (or about to hold) a piece for a tenant, with the deal status. */
  pieceDeals(tenantId: number, pieceCid: string): { provider: string; status: OnChainDealStatus }[]
  count(tenantId: number): number
}

const MAX_ID = Number.MAX_SAFE_INTEGER

export function createDealStore(db: Db): DealStore {
  const cols = 'deal_id, last_update_ms, status, published_epoch, start_epoch, end_epoch, proposal'
  const q = {
    byId: db.prepare(`SELECT ${cols} FROM deals WHERE tenant_id = ? AND deal_id > ? ORDER BY deal_id LIMIT ?`).raw(true),
    byUpdate: db
      .prepare(`SELECT ${cols} FROM deals WHERE tenant_id = ? AND (last_update_ms, deal_id) > (?, ?) ORDER BY last_update_ms, deal_id LIMIT ?`)
      .raw(true),
    lastUpdateOf: db.prepare('SELECT last_update_ms FROM deals WHERE tenant_id = ? AND deal_id = ?').pluck(),
    current: db.prepare('SELECT status, published_epoch, start_epoch, end_epoch FROM deals WHERE tenant_id = ? AND deal_id = ?'),
    upsert: db.prepare(`INSERT INTO deals (tenant_id, deal_id, last_update_ms, piece_cid, provider, status, published_epoch, start_epoch, end_epoch, proposal)
      VALUES (@tenantId, @dealId, @lastUpdateMs, @pieceCid, @provider, @status, @publishedEpoch, @startEpoch, @endEpoch, @proposal)
      ON CONFLICT (tenant_id, deal_id) DO UPDATE SET last_update_ms = excluded.last_update_ms, status = excluded.status,
        published_epoch = excluded.published_epoch, start_epoch = excluded.start_epoch, end_epoch = excluded.end_epoch`),
    pieceDeals: db.prepare('SELECT provider, status FROM deals WHERE tenant_id = ? AND piece_cid = ?'),
    count: db.prepare('SELECT count(*) FROM deals WHERE tenant_id = ?').pluck(),
  }

  const row = (tenantId: number, d: StoredDeal) => ({
    tenantId,
    dealId: d.dealId,
    lastUpdateMs: d.lastUpdateMs,
    pieceCid: d.proposal.PieceCID['/'],
    provider: d.proposal.Provider,
    status: d.state.status,
    publishedEpoch: d.state.publishedEpoch,
    startEpoch: d.state.onChainStartEpoch,
    endEpoch: d.state.onChainEndEpoch,
    proposal: JSON.stringify(d.proposal),
  })
  const insertMany = db.transaction((tenantId: number, deals: StoredDeal[]) => {
    for (const d of deals) q.upsert.run(row(tenantId, d))
  })

  return {
    *pageChunks(tenantId, sort, cursor, pageSize = PAGE_SIZE, chunkRows = CHUNK_ROWS) {
      // Resolve the cursor first, so a bad one fails before anything is sent.
      let after: [number, number]
      if (sort === 'dealId') {
        after = [0, cursor === null ? -1 : parseDealId(cursor)]
      } else if (cursor === null) {
        after = [-1, -1]
      } else {
        const m = /^([0-9]{1,16})(?:@([0-9]{1,16}))?$/.exec(cursor)
        if (!m) throw badRequest('next: not a cursor returned by this endpoint')
        const dealId = parseDealId(m[1])
        const ms = m[2] === undefined ? (q.lastUpdateOf.get(tenantId, dealId) as number | undefined) : Number(m[2])
        if (ms === undefined) throw badRequest('next: the cursor names no deal of yours')
        after = [ms, dealId]
      }
      let left = pageSize
      let last: [number, number] | undefined
      // Small keyset sub-queries: each finishes before the chunk is handed out, so
      // the connection is never held across the caller's awaits, and no string
      // grows large enough to linger in V8's large-object space.
      while (left > 0) {
        const limit = Math.min(chunkRows, left)
        const rows = (sort === 'dealId' ? q.byId.all(tenantId, after[1], limit) : q.byUpdate.all(tenantId, after[0], after[1], limit)) as unknown[][]
        if (rows.length === 0) break
        const parts: string[] = []
        for (const r of rows) {
          const [dealId, ms, status, published, start, end, proposal] = r as [number, number, string, number, number, number, string]
          parts.push(
            `"${dealId}":{"lastUpdate":${ms / 1000},"proposal":${proposal},"state":{"status":"${status}","publishedEpoch":${published},"onChainStartEpoch":${start},"onChainEndEpoch":${end}}}`,
          )
        }
        last = rows.at(-1) as [number, number]
        after = [last[1], last[0]]
        left -= rows.length
        yield parts.join(',')
        if (rows.length < limit) break
      }
      return last ? encodeCursor(sort, { dealId: last[0], lastUpdateMs: last[1] }) : null
    },
    page(tenantId, sort, cursor, pageSize = PAGE_SIZE) {
      const it = this.pageChunks(tenantId, sort, cursor, pageSize)
      const chunks: string[] = []
      let step = it.next()
      while (!step.done) {
        chunks.push(step.value)
        step = it.next()
      }
      return { resultJson: `{${chunks.join(',')}}`, count: chunks.length, next: step.value }
    },
    upsert(tenantId, deal, nowMs) {
      const cur = q.current.get(tenantId, deal.dealId) as
        | { status: string; published_epoch: number; start_epoch: number; end_epoch: number }
        | undefined
      const s = deal.state
      if (cur && cur.status === s.status && cur.published_epoch === s.publishedEpoch && cur.start_epoch === s.onChainStartEpoch && cur.end_epoch === s.onChainEndEpoch) {
        return false
      }
      q.upsert.run(row(tenantId, { ...deal, lastUpdateMs: nowMs }))
      return true
    },
    insertMany(tenantId, deals) {
      insertMany(tenantId, deals)
    },
    pieceDeals: (tenantId, pieceCid) => q.pieceDeals.all(tenantId, pieceCid) as { provider: string; status: OnChainDealStatus }[],
    count: (tenantId) => q.count.get(tenantId) as number,
  }
}

function parseDealId(text: string): number {
  if (!/^(0|[1-9][0-9]{0,15})$/.test(text) || Number(text) > MAX_ID) throw badRequest('next: not a cursor returned by this endpoint')
  return Number(text)
}
