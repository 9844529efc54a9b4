import type { ContentStore } from '../content/index.ts'
import type { Logger } from '../../shared/logger.ts'
import type { GroupCopies, RouteHeads } from './copies.ts'
import type { TickReport } from './types.ts'

/** Groups whose copies on every route are retrievable, with no provider still fetching: local CAR and blocks removed. */
export async function offloadGroups(
  o: { content: ContentStore; logger: Logger; copies: GroupCopies },
  heads: RouteHeads,
  r: TickReport,
): Promise<void> {
  for (const g of await o.content.groups()) {
    if (g.state !== 'ready_for_deals' || !(await o.copies.satisfied(g.id, heads))) continue
    // A provider may still be fetching the CAR.
    if (await o.copies.transferPending(g.id)) continue
    if (await o.content.offload(g.id)) {
      r.offloaded++
      o.logger.info({ groupId: g.id, retrievableCopies: g.retrievableCopies }, 'group offloaded: local CAR and blocks removed')
    }
  }
}
