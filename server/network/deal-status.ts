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

/** Padded piece size of a CAR of `bytes` bytes: ceil(n/127)·128 rounded up to a power of two (min 128). */
export function paddedPieceSize(bytes: number): number {
  const padded = Math.max(128, Math.ceil(bytes / 127) * 128)
  return 2 ** Math.ceil(Math.log2(padded))
}
