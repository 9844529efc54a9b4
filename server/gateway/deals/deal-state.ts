import type { DealState } from '../../shared/contracts/file-info.ts'

/**
 * A deal as the gateway tracks it:
 *   proposing → proposed (provider accepted, fetching the CAR)
 *             → published (deal id on chain) → active (in a sector)
 * and, off that path, `failed` (refused, transfer failed, lied about the data,
 * never sealed in time, lost across a restart) or `ended` (expired, slashed).
 * Only proposed, published and active are shown in /file-info.
 */
export type GatewayDealState = 'proposing' | 'proposed' | 'published' | 'active' | 'failed' | 'ended'

/** States that still count towards a group's copies (or may soon). */
export const LIVE_STATES: readonly GatewayDealState[] = ['proposing', 'proposed', 'published', 'active']

/** What /file-info shows of a deal. */
export type ShownDealState = DealState

export function shownState(state: GatewayDealState): ShownDealState | undefined {
  if (state === 'proposing') return 'proposed'
  return state === 'proposed' || state === 'published' || state === 'active' ? state : undefined
}

/** Every move a deal may make; anything else is a stale or out-of-order update and changes nothing. */
export const DEAL_TRANSITIONS: Readonly<Record<GatewayDealState, readonly GatewayDealState[]>> = {
  proposing: ['proposed', 'failed'],
  proposed: ['published', 'failed'],
  published: ['active', 'failed', 'ended'],
  active: ['ended', 'failed'],
  failed: [],
  ended: [],
}
