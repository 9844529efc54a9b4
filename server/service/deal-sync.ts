import { dealStatus } from '../network/deal-status.ts'
import type { NetworkPort } from '../network/types.ts'
import type { Logger } from '../shared/logger.ts'
import type { DealStore } from './deal-store.ts'
import type { TenantStore } from './tenants.ts'

export interface DealSync {
  /** Pulls every tenant's deals from the network and records changes; returns how many changed. */
  syncOnce(): Promise<number>
  start(intervalMs: number): void
  stop(): Promise<void>
}

/** Keeps the service's copy of on-chain deals (what get-on-chain-deals pages through) up to date. */
export function createDealSync(deps: { network: NetworkPort; tenants: TenantStore; deals: DealStore; now: () => number; logger: Logger }): DealSync {
  let timer: NodeJS.Timeout | undefined
  let running: Promise<number> | undefined

  const syncOnce = async (): Promise<number> => {
    const head = (await deps.network.chainHead()).epoch
    let changed = 0
    for (const tenant of deps.tenants.list()) {
      if (tenant.clientAddresses.length === 0) continue
      const ids = (await Promise.all(tenant.clientAddresses.map((a) => deps.network.lookupId(a)))).filter((x): x is string => !!x)
      for await (const deal of deps.network.dealsByClients(ids)) {
        if (deps.deals.upsert(tenant.id, { dealId: deal.dealId, proposal: deal.proposal, state: dealStatus(deal, head) }, deps.now())) changed++
      }
    }
    return changed
  }

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
