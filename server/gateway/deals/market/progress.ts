import { counted, inWallTime } from '../../words.ts'
import type { RouteProgress } from '../route.ts'
import type { GroupDeal } from '../types.ts'
import type { DealKind } from './types.ts'

/** What the deal market knows of one group beyond its deals. */
export interface MarketFacts {
  copies: number
  /** Chain head of the last pass (undefined before the first). */
  head?: number
  epochSeconds: number
  /** Why the last search found no provider for the group. */
  noProviders?: string
  /** Set while the deal service cannot be reached. */
  serviceError?: string
  /** Set while the client address lacks the DataCap or escrow its deals need. */
  fundsError?: string
  /** Set while DEAL_MAX_PRICE_PER_TIB_MONTH cannot be worked out (USD with no FIL price). */
  priceError?: string
  kind: DealKind
}

/**
 * Where a group's deals stand, in words: copies stored, providers fetching
 * the data, deals waiting to be sealed and by when at the latest; or what
 * stops new ones (funds, the deal service, no provider). With none of its
 * deals moving, a block holds the group back (as on the PDP route): its
 * reason names it, the copies stored said after it.
 */
export function marketProgress(deals: readonly GroupDeal[], f: MarketFacts): RouteProgress {
  const count = (...states: string[]) => deals.filter((d) => states.includes(d.state)).length
  const stored = count('active')
  const fetching = count('proposing', 'proposed')
  const published = deals.filter((d) => d.state === 'published')
  const steps: string[] = []
  if (stored > 0) steps.push(`${stored} of ${counted(f.copies, 'copy', 'copies')} stored`)
  if (fetching > 0) steps.push(`${counted(fetching, 'provider is', 'providers are')} fetching the data`)
  if (published.length > 0) {
    // An epoch number means nothing to a person: the start is said as a time from now. It is the provider's
    // deadline, not a forecast: a provider proves the sector when it is sealed, often well before.
    const start = Math.min(...published.map((d) => d.startEpoch))
    const startsIn = f.head === undefined ? '' : `, ${inWallTime(start - f.head, f.epochSeconds)}`
    const who = published.length === 1 ? 'the provider' : `${published.length} providers`
    steps.push(`waiting for ${who} to seal: at the latest by the deal's start${startsIn}`)
  }
  const blocked = f.fundsError ?? f.serviceError ?? f.priceError ?? f.noProviders
  return {
    // Stored copies alone do not move: while more are blocked, the block is what the group waits for (a repair's too).
    underWay: fetching > 0 || published.length > 0 || (stored > 0 && !blocked),
    steps,
    ...(f.fundsError
      ? { blocked: { code: 'WAITING_FOR_FUNDS', words: `waiting for funds: ${f.fundsError}` } }
      : f.serviceError
        ? { blocked: { code: 'DEAL_SERVICE_UNREACHABLE', words: 'waiting for the deal service, which cannot be reached right now' } }
        : f.priceError
          ? { blocked: { code: 'NO_PROVIDER', words: f.priceError } }
          : f.noProviders
            ? { blocked: { code: 'NO_PROVIDER', words: f.noProviders } }
            : {}),
    ...(f.kind.note ? { note: f.kind.note } : {}),
  }
}
