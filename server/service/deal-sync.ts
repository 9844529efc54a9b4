import { dealStatus } from '../network/deal-status.ts'
import type { NetworkPort } from '../network/types.ts'
import type { Logger } from '../shared/logger.ts'
import type { Sql } from '../shared/sql/index.ts'
import type { DealStore, SyncedDeal } from './deal-store.ts'
import type { TenantStore } from './tenants.ts'

export interface DealSync {
  /** Pulls every tenant's deals from the network and records changes; returns how many changed (0 while another replica syncs). */
  syncOnce(): Promise<number>
  start(intervalMs: number): void
  stop(): Promise<void>
}

const SYNC_BATCH = 500

/**
 * Keeps the service's copy of on-chain deals (what get-on-chain-deals pages through) up to date.
 * Replicas on one PostgreSQL database take turns: while one syncs, the others' rounds
 * are skipped (they would only repeat its idempotent upserts).
 */
export function createDealSync(deps: { sql: Sql; network: NetworkPort; tenants: TenantStore; deals: DealStore; now: () => number; logger: Logger }): DealSync {
  let timer: NodeJS.Timeout | undefined
  let running: Promise<number> | undefined

  const syncAll = async (): Promise<number> => {
    const head = (await deps.network.chainHead()).epoch
    let changed = 0
    for (const tenant of await deps.tenants.list()) {
      if (tenant.clientAddresses.length === 0) continue
      const ids = (await Promise.all(tenant.clientAddresses.map((a) => deps.network.lookupId(a)))).filter((x): x is string => !!x)
      // Written a few hundred at a time (one statement each); keyed by id, as two addresses may name one client.
      const batch = new Map<number, SyncedDeal>()
      const flush = async () => {
        changed += await deps.deals.upsert(tenant.id, [...batch.values()], deps.now())
        batch.clear()
      }
      for await (const deal of deps.network.dealsByClients(ids)) {
        batch.set(deal.dealId, { dealId: deal.dealId, proposal: deal.proposal, state: dealStatus(deal, head) })
        if (batch.size >= SYNC_BATCH) await flush()
      }
      await flush()
    }
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
          .catch((err) => deps.logger.warn({ err }, 'deal sync failed; will retry'))
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
      await running?.catch(() => undefined)
    },
  }
}
