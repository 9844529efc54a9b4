import type { MarketDeal } from './types.ts'

export type OnChainDealStatus = 'published' | 'published-expired' | 'active' | 'slashed' | 'expired' | 'unknown'

export interface OnChainDealState {
  status: OnChainDealStatus
  publishedEpoch: number
  onChainStartEpoch: number
  onChainEndEpoch: number
}

/** The one place that turns market-actor state plus the chain head into a deal status. */
export function dealStatus(deal: MarketDeal, head: number): OnChainDealState {
  const { proposal, state } = deal
  const started = state.SectorStartEpoch >= 0
  const base = { publishedEpoch: deal.publishedEpoch, onChainStartEpoch: started ? state.SectorStartEpoch : -1 }
  if (state.SlashEpoch >= 0) return { ...base, status: 'slashed', onChainEndEpoch: state.SlashEpoch }
  if (started && head >= proposal.EndEpoch) return { ...base, status: 'expired', onChainEndEpoch: proposal.EndEpoch }
  if (started) return { ...base, status: 'active', onChainEndEpoch: -1 }
  if (head >= proposal.StartEpoch) return { ...base, status: 'published-expired', onChainEndEpoch: -1 }
  if (head >= 0) return { ...base, status: 'published', onChainEndEpoch: -1 }
  return { ...base, status: 'unknown', onChainEndEpoch: -1 }
}
