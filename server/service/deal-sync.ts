import { dealStatus } from '../network/deal-status.ts'
import type { NetworkPort } from '../network/types.ts'
import type { Logger } from '../shared/logger.ts'
import type { Sql } from '../shared/sql/index.ts'
import type { OnChainDealState } from '../network/deal-status.ts'
import type { DealStore, SyncedDeal } from './deal-store.ts'
import type { TenantStore } from './tenants.ts'

export interface DealSync {
  /** Pulls every tenant's deals from the network and records changes; returns how many changed (0 while another replica syncs). */
  syncOnce(): Promise<number>
  start(intervalMs: number): void
  stop(): Promise<void>
}

const SYNC_BATCH = 500

export interface DealSyncOptions {
  /** Deal ids looked at per pass when walking up to the market's NextID (one StateMarketStorageDeal each). */
  scanPerPass?: number
  /** On the first pass the walk starts this many ids below NextID: older deals are not looked for. */
  initialLookback?: number
  /** StateMarketStorageDeal calls in flight at once. */
  concurrency?: number
}

/**
 * What a deal the service recorded has become when the market no longer holds it: the
 * actor removes a deal not activated by its start epoch, a terminated one, and an expired
 * one (lotus chain/stmgr/actors.go: "deal not found"), so what it was last decides.
 */
export function vanishedDealState(recorded: SyncedDeal, head: number): OnChainDealState {
  const s = recorded.state
  if (s.onChainStartEpoch < 0) return { ...s, status: 'published-expired', onChainEndEpoch: -1 }
  if (head >= recorded.proposal.EndEpoch) return { ...s, status: 'expired', onChainEndEpoch: recorded.proposal.EndEpoch }
  // Gone before its end while active: terminated. The slash epoch went with it; this pass's head bounds it.
  return { ...s, status: 'slashed', onChainEndEpoch: head }
}

/**
 * Runs `fn` over `items` with at most `limit` at once, in order of results.
 * Once `signal` is aborted no further item starts, and it throws once the ones under way are done.
 */
async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>, signal?: AbortSignal): Promise<R[]> {
  const out: R[] = new Array(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length && !signal?.aborted) {
      const i = next++
      out[i] = await fn(items[i])
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  signal?.throwIfAborted()
  return out
}

/**
 * Keeps the service's copy of on-chain deals (what get-on-chain-deals pages through) up to date,
 * with the gateway API only (StateMarketDeals is a full node's, and gigabytes on mainnet): each
 * deal it knows is followed with StateMarketStorageDeal, and new ones are found by walking deal
 * ids (sequential in the market actor) up to its NextID, a bounded number per pass.
 * Replicas on one PostgreSQL database take turns: while one syncs, the others' rounds
 * are skipped (they would only repeat its idempotent upserts).
 */
export function createDealSync(
  deps: { sql: Sql; network: NetworkPort; tenants: TenantStore; deals: DealStore; now: () => number; logger: Logger },
  options: DealSyncOptions = {},
): DealSync {
  let timer: NodeJS.Timeout | undefined
  let running: Promise<number> | undefined
  // A pass walks up to 2,000 deal ids, one call each: a stop ends it after the calls in flight
  // instead of waiting for all of them (seconds on a busy node), and writes nothing of it.
  const stopped = new AbortController()
  const scanPerPass = options.scanPerPass ?? 2_000
  const initialLookback = options.initialLookback ?? 2_000
  const concurrency = options.concurrency ?? 8

  const syncAll = async (): Promise<number> => {
    const head = (await deps.network.chainHead()).epoch
    let changed = 0
    const write = async (tenantId: number, deals: SyncedDeal[]) => {
      for (let i = 0; i < deals.length; i += SYNC_BATCH)
        changed += await deps.deals.upsert(tenantId, deals.slice(i, i + SYNC_BATCH), deps.now())
    }
    // Which tenants a client address (as given, or its ID address) belongs to.
    const tenantsOf = new Map<string, number[]>()
    const tenants = (await deps.tenants.list()).filter((t) => t.clientAddresses.length > 0)
    for (const tenant of tenants) {
      const ids = await Promise.all(tenant.clientAddresses.map((a) => deps.network.lookupId(a)))
      for (const a of new Set([...tenant.clientAddresses, ...ids.filter((x): x is string => !!x)]))
        tenantsOf.set(a, [...(tenantsOf.get(a) ?? []), tenant.id])
    }

    // The deals already known: where each is now, or what it became if the market dropped it.
    for (const tenant of tenants) {
      // Only the deals of its client addresses: one recorded for another client (an address the tenant
      // no longer has) is not its to follow.
      const open = (await deps.deals.openDeals(tenant.id)).filter((d) => tenantsOf.get(d.proposal.Client)?.includes(tenant.id))
      const now = await mapLimit(
        open,
        concurrency,
        async (recorded): Promise<SyncedDeal> => {
          const deal = await deps.network.getDeal(recorded.dealId)
          if (!deal) return { ...recorded, state: vanishedDealState(recorded, head) }
          const state = dealStatus(deal, head)
          // A node does not tell the publish epoch (-1); keep the one recorded.
          return {
            dealId: deal.dealId,
            proposal: deal.proposal,
            state: state.publishedEpoch < 0 ? { ...state, publishedEpoch: recorded.state.publishedEpoch } : state,
          }
        },
        stopped.signal,
      )
      await write(tenant.id, now)
    }

    // New deals: the ids from where the last walk stopped up to NextID, a bounded stretch per pass.
    const nextId = await deps.network.nextDealId()
    const from = (await deps.deals.scanCursor()) ?? Math.max(0, nextId - initialLookback)
    const to = Math.min(nextId, from + scanPerPass)
    const ids = Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i)
    const found = new Map<number, SyncedDeal[]>()
    await mapLimit(
      ids,
      concurrency,
      async (id) => {
        const deal = await deps.network.getDeal(id)
        const owners = deal ? tenantsOf.get(deal.proposal.Client) : undefined
        if (!deal || !owners) return
        for (const tenantId of new Set(owners))
          found.set(tenantId, [
            ...(found.get(tenantId) ?? []),
            { dealId: deal.dealId, proposal: deal.proposal, state: dealStatus(deal, head) },
          ])
      },
      stopped.signal,
    )
    for (const [tenantId, deals] of found) await write(tenantId, deals)
    if (to > from) await deps.deals.saveScanCursor(to)
    return changed
  }
  const syncOnce = async () => (await deps.sql.exclusively('service.deal-sync', syncAll)) ?? 0

  // One sync at a time: a slow node must not stack them up.
  const guarded = () => (running ??= syncOnce().finally(() => (running = undefined)))

  return {
    syncOnce: guarded,
    start(intervalMs) {
      const tick = () => {
        guarded()
          .catch((err) => stopped.signal.aborted || deps.logger.warn({ err }, 'deal sync failed; will retry'))
          .finally(() => {
            if (timer) timer = setTimeout(tick, intervalMs)
          })
      }
      timer = setTimeout(tick, 0)
    },
    async stop() {
      const t = timer
      timer = undefined
      clearTimeout(t)
      stopped.abort()
      await running?.catch(() => undefined)
    },
  }
}
