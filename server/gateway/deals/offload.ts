import type { EngineContext, TickReport } from './types.ts'

/** Groups whose copies on every route are retrievable, with no provider still fetching: local CAR and blocks removed. */
export async function offloadGroups(c: EngineContext, head: number, r: TickReport): Promise<void> {
  const { content, logger } = c.o
  for (const g of await content.groups()) {
    if (g.state !== 'ready_for_deals' || !(await c.satisfied(g.id, head))) continue
    // A provider may still be fetching the CAR.
    if (await c.transferPending(g.id)) continue
    if (await content.offload(g.id)) {
      r.offloaded++
      logger.info({ groupId: g.id, retrievableCopies: g.retrievableCopies }, 'group offloaded: local CAR and blocks removed')
    }
  }
}
