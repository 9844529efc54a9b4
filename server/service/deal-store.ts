import type { Sql } from '../shared/sql/index.ts'
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

/** A deal as the chain shows it now. */
export type SyncedDeal = Omit<StoredDeal, 'lastUpdateMs'>

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
   * deals each, in page order, from one query; returns the `next` cursor (null when empty).
   * Throws a 400 on the first step for a bad cursor.
   */
  pageChunks(
    tenantId: number,
    sort: DealSort,
    cursor: string | null,
    pageSize?: number,
    chunkRows?: number,
  ): AsyncGenerator<string, string | null>
  /** The whole page at once (small pages, tests). */
  page(tenantId: number, sort: DealSort, cursor: string | null, pageSize?: number): Promise<DealPage>
  /**
   * Writes the deals that are new or whose on-chain state changed, with lastUpdate `nowMs`;
   * returns how many it wrote. Ids distinct within a call.
   */
  upsert(tenantId: number, deals: readonly SyncedDeal[], nowMs: number): Promise<number>
  /** Fast bulk load for benchmarks and seeding (no change detection; ids distinct within a call). */
  insertMany(tenantId: number, deals: StoredDeal[]): Promise<void>
  /** Providers holding (or about to hold) a piece for a tenant, with the deal status. */
  pieceDeals(tenantId: number, pieceCid: string): Promise<{ provider: string; status: OnChainDealStatus }[]>
  count(tenantId: number): Promise<number>
  /** The tenant's deals that may still change on chain (published, active, unknown), as last recorded. */
  openDeals(tenantId: number): Promise<SyncedDeal[]>
  /** The deal id the walk over the market's deals goes on from; null before the first walk. */
  scanCursor(): Promise<number | null>
  saveScanCursor(nextDealId: number): Promise<void>
}

const MAX_ID = Number.MAX_SAFE_INTEGER

const COLUMNS = 'tenant_id, deal_id, last_update_ms, piece_cid, provider, status, published_epoch, start_epoch, end_epoch, page_entry'
const ON_CONFLICT = `ON CONFLICT (tenant_id, deal_id) DO UPDATE SET last_update_ms = excluded.last_update_ms, status = excluded.status,
  published_epoch = excluded.published_epoch, start_epoch = excluded.start_epoch, end_epoch = excluded.end_epoch, page_entry = excluded.page_entry`
// An update only where the on-chain state changed: replicas syncing the same deal at once write (and bump lastUpdate) once.
const IF_CHANGED = `WHERE deals.status <> excluded.status OR deals.published_epoch <> excluded.published_epoch
  OR deals.start_epoch <> excluded.start_epoch OR deals.end_epoch <> excluded.end_epoch`
/** Rows per INSERT: 10 000 parameters, within SQLite's 32 766 and PostgreSQL's 65 535. */
const INSERT_ROWS = 1000
const insertTexts = new Map<string, string>()
const insertText = (rows: number, ifChanged: boolean) => {
  const key = `${rows}${ifChanged}`
  let text = insertTexts.get(key)
  if (!text) {
    text = `INSERT INTO deals (${COLUMNS}) VALUES ${Array(rows).fill('(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')} ${ON_CONFLICT}${ifChanged ? ` ${IF_CHANGED}` : ''}`
    insertTexts.set(key, text)
  }
  return text
}

const values = (tenantId: number, d: StoredDeal) => [
  tenantId,
  d.dealId,
  d.lastUpdateMs,
  d.proposal.PieceCID['/'],
  d.proposal.Provider,
  d.state.status,
  d.state.publishedEpoch,
  d.state.onChainStartEpoch,
  d.state.onChainEndEpoch,
  pageEntry(d),
]

/**
 * A deal as get-on-chain-deals lists it, `"<dealId>":{"lastUpdate":…,"proposal":…,"state":{…}}`,
 * kept with the deal so that a page is one string per deal. Keys in the order of the page's
 * records (the documented response), lastUpdate in seconds.
 */
function pageEntry(d: StoredDeal): string {
  const s = d.state
  return `"${d.dealId}":{"lastUpdate":${d.lastUpdateMs / 1000},"proposal":${JSON.stringify(d.proposal)},"state":{"status":"${s.status}","publishedEpoch":${s.publishedEpoch},"onChainStartEpoch":${s.onChainStartEpoch},"onChainEndEpoch":${s.onChainEndEpoch}}}`
}

/**
 * Multi-row INSERTs: full ones, then the rest in powers of two, so that there are few
 * statement texts and the prepared-statement caches stay small. Returns the rows written.
 */
async function write(sql: Sql, tenantId: number, deals: readonly StoredDeal[], ifChanged: boolean): Promise<number> {
  let written = 0
  for (let i = 0; i < deals.length;) {
    const left = deals.length - i
    const rows = left >= INSERT_ROWS ? INSERT_ROWS : 2 ** Math.floor(Math.log2(left))
    written += (
      await sql.run(
        insertText(rows, ifChanged),
        deals.slice(i, i + rows).flatMap((d) => values(tenantId, d)),
      )
    ).changes
    i += rows
  }
  return written
}

const BY_DEAL_ID = 'SELECT page_entry FROM deals WHERE tenant_id = ? AND deal_id > ? ORDER BY deal_id LIMIT ?'
const BY_LAST_UPDATE =
  'SELECT page_entry FROM deals WHERE tenant_id = ? AND (last_update_ms, deal_id) > (?, ?) ORDER BY last_update_ms, deal_id LIMIT ?'

/** The keys at the head of a page entry (where the next chunk starts): [lastUpdateMs, dealId]. */
function keysOf(pageEntry: string): [number, number] {
  const m = /^"([0-9]+)":\{"lastUpdate":([0-9]+)(?:\.([0-9]{1,3}))?,/.exec(pageEntry)!
  return [Number(m[2]) * 1000 + Number((m[3] ?? '').padEnd(3, '0')), Number(m[1])]
}

/**
 * PostgreSQL plans a page by its statistics of the table. Right after a tenant's
 * first big sync they still say "a few deals", and the planner sorts every deal of
 * the tenant for one page (0.6 s instead of 30 ms) until autovacuum analyzes the
 * table. So the store analyzes it itself each time the rows it wrote double.
 */
function createStatistics(sql: Sql) {
  let written = 0
  let analyzedAt = 0
  return {
    async wrote(rows: number): Promise<void> {
      written += rows
      if (sql.dialect !== 'postgres' || written < Math.max(ANALYZE_AFTER_ROWS, 2 * analyzedAt)) return
      analyzedAt = written
      await sql.exec('ANALYZE deals')
    },
  }
}
const ANALYZE_AFTER_ROWS = 10_000

export function createDealStore(sql: Sql): DealStore {
  const statistics = createStatistics(sql)
  const store: DealStore = {
    async *pageChunks(tenantId, sort, cursor, pageSize = PAGE_SIZE, chunkRows = CHUNK_ROWS) {
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
        const ms =
          m[2] === undefined
            ? (
                await sql.get<{ last_update_ms: number }>('SELECT last_update_ms FROM deals WHERE tenant_id = ? AND deal_id = ?', [
                  tenantId,
                  dealId,
                ])
              )?.last_update_ms
            : Number(m[2])
        if (ms === undefined) throw badRequest('next: the cursor names no deal of yours')
        after = [ms, dealId]
      }
      // One query for the page (on PostgreSQL a round trip costs more than its rows), and
      // it finishes before anything is handed out, so the connection is never held across
      // the caller's awaits; handed out in chunks, so that no string of the whole page is built.
      const deals =
        sort === 'dealId'
          ? await sql.column<string>(BY_DEAL_ID, [tenantId, after[1], pageSize])
          : await sql.column<string>(BY_LAST_UPDATE, [tenantId, after[0], after[1], pageSize])
      for (let i = 0; i < deals.length; i += chunkRows) yield deals.slice(i, i + chunkRows).join(',')
      if (deals.length === 0) return null
      const [lastUpdateMs, dealId] = keysOf(deals[deals.length - 1])
      return encodeCursor(sort, { dealId, lastUpdateMs })
    },
    async page(tenantId, sort, cursor, pageSize = PAGE_SIZE) {
      const it = store.pageChunks(tenantId, sort, cursor, pageSize)
      const chunks: string[] = []
      let step = await it.next()
      while (!step.done) {
        chunks.push(step.value)
        step = await it.next()
      }
      return { resultJson: `{${chunks.join(',')}}`, count: chunks.length, next: step.value }
    },
    async upsert(tenantId, deals, nowMs) {
      const written = await write(
        sql,
        tenantId,
        deals.map((d) => ({ ...d, lastUpdateMs: nowMs })),
        true,
      )
      await statistics.wrote(written)
      return written
    },
    async insertMany(tenantId, deals) {
      await statistics.wrote(await sql.transaction((tx) => write(tx, tenantId, deals, false)))
    },
    pieceDeals: (tenantId, pieceCid) =>
      sql.all<{ provider: string; status: OnChainDealStatus }>('SELECT provider, status FROM deals WHERE tenant_id = ? AND piece_cid = ?', [
        tenantId,
        pieceCid,
      ]),
    count: async (tenantId) => (await sql.get<{ n: number }>('SELECT count(*) AS n FROM deals WHERE tenant_id = ?', [tenantId]))!.n,
    async openDeals(tenantId) {
      const entries = await sql.column<string>(
        `SELECT page_entry FROM deals WHERE tenant_id = ? AND status IN ('published', 'active', 'unknown') ORDER BY deal_id`,
        [tenantId],
      )
      return entries.map((entry) => {
        const [[id, d]] = Object.entries(JSON.parse(`{${entry}}`) as Record<string, { proposal: DealProposal; state: OnChainDealState }>)
        return { dealId: Number(id), proposal: d.proposal, state: d.state }
      })
    },
    scanCursor: async () =>
      (await sql.get<{ next_deal_id: number }>('SELECT next_deal_id FROM deal_scan WHERE id = 1', []))?.next_deal_id ?? null,
    async saveScanCursor(nextDealId) {
      await sql.run(
        'INSERT INTO deal_scan (id, next_deal_id) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET next_deal_id = excluded.next_deal_id',
        [nextDealId],
      )
    },
  }
  return store
}

function parseDealId(text: string): number {
  if (!/^(0|[1-9][0-9]{0,15})$/.test(text) || Number(text) > MAX_ID) throw badRequest('next: not a cursor returned by this endpoint')
  return Number(text)
}
