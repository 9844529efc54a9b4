import type { DealProposal } from '../../../network/types.ts'
import { paddedPieceSize } from '../../../shared/piece.ts'
import { createNote } from '../note.ts'
import type { GroupDeal, RouteContext } from '../types.ts'
import type { MarketRouteOptions } from './types.ts'

/** Deal ids read per pass on the way up to the market's NextID (one StateMarketStorageDeal each). */
const WALK_PER_PASS = 200
/** The first walk after a start begins this many ids below NextID, so a proposal made before a restart is still found. */
const LOOKBACK = 2_000

/** Whether two addresses are the same, the network letter aside (f on mainnet, t on test networks). */
export const sameAddress = (a: string, b: string | null | undefined) => !!b && a.slice(1) === b.slice(1)

/** What `walk` found: proposals matched to their deal id, and whether every deal published by now was seen. */
export interface WalkResult {
  matched: Map<number, number>
  /** False when the chain could not be asked, or more ids are left for the next pass: nothing may be given up on. */
  complete: boolean
}

export interface ChainMatcher {
  /**
   * Reads the deals the market published since the last pass and matches each to one of `proposed`; never
   * throws (`clientId`: the client's ID address, as the chain's deals name it).
   */
  walk(proposed: readonly GroupDeal[], head: number, clientId: () => Promise<string | null>): Promise<WalkResult>
}

/** Whether the chain's proposal is exactly what we signed: piece, size, provider, client, label and epochs. */
export function isOurs(d: GroupDeal, label: string, p: DealProposal, client: { address: string; id: string | null }): boolean {
  if (p.PieceCID['/'] !== d.pieceCid || p.Label !== label) return false
  if (d.transferSize !== undefined && p.PieceSize !== paddedPieceSize(d.transferSize)) return false
  if (!sameAddress(p.Provider, d.provider)) return false
  if (!sameAddress(p.Client, client.id) && !sameAddress(p.Client, client.address)) return false
  return p.StartEpoch === d.startEpoch && p.EndEpoch === d.endEpoch
}

/**
 * Finds the deals providers published for us on the chain itself, whatever they say in their status
 * answers: Curio tells neither the deal id nor the publish message until its pipeline is done and
 * cleaned up (curio market/mk12/mk12_utils.go, GetDealStatus; tasks/gc/pipeline_meta_gc.go), which
 * can be after the deal's start epoch. The market gives deal ids in order (its NextID, read as the
 * deal service reads it, service/deal-sync.ts), so each pass reads the ids published since the
 * last one, a bounded stretch at a time, and matches each deal to the proposal it is.
 */
export function createChainMatcher(
  c: Pick<RouteContext, 'logger' | 'content'>,
  o: Pick<MarketRouteOptions, 'providers' | 'clientAddress'>,
): ChainMatcher {
  const { providers } = o
  let cursor: number | undefined
  const unread = createNote<string>({
    key: () => 'unread',
    said: (reason) => c.logger.warn({ reason }, "the market's new deals could not be read; no proposal is given up on until they are"),
    cleared: () => c.logger.info("the market's new deals are read again"),
  })
  // The label each group's proposals were signed with: its payload root (propose.ts).
  const labels = new Map<number, string>()
  async function withLabels(proposed: readonly GroupDeal[]) {
    for (const groupId of labels.keys()) if (!proposed.some((d) => d.groupId === groupId)) labels.delete(groupId)
    const out = []
    for (const deal of proposed) {
      if (!labels.has(deal.groupId)) labels.set(deal.groupId, (await c.content.carRoot(deal.groupId)) ?? '')
      out.push({ deal, label: labels.get(deal.groupId)! })
    }
    return out
  }

  return {
    async walk(proposed, head, clientId) {
      const matched = new Map<number, number>()
      try {
        const next = await providers.nextDealId()
        cursor ??= Math.max(0, next - LOOKBACK)
        // No proposal waits: whatever is published from here on is for a proposal made after this read.
        if (proposed.length === 0) {
          cursor = next
          return { matched, complete: true }
        }
        const client = { address: o.clientAddress, id: await clientId() }
        const open = await withLabels(proposed)
        const to = Math.min(next, cursor + WALK_PER_PASS)
        // The cursor moves past an id only once the chain answered for it: a busy node leaves it for the next pass.
        for (; cursor < to && open.length > 0; cursor++) {
          const onChain = await providers.dealOnChain(cursor, head)
          const i = onChain ? open.findIndex((p) => isOurs(p.deal, p.label, onChain.proposal, client)) : -1
          if (i < 0) continue
          matched.set(open[i].deal.id, cursor)
          c.logger.info({ dealId: cursor, provider: open[i].deal.provider, groupId: open[i].deal.groupId }, 'deal found on chain')
          open.splice(i, 1)
        }
        unread.set(undefined)
        // Every proposal matched: the ids left are someone else's; the next pass reads them.
        return { matched, complete: open.length === 0 || cursor >= next }
      } catch (error) {
        // What was matched before the chain stopped answering is kept; the rest waits for the next pass.
        unread.set((error as Error)?.message ?? String(error))
        return { matched, complete: false }
      }
    },
  }
}
