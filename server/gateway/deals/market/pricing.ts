import { ceilingInAttoFil, describePerTiBMonth, perTiBMonth, type PriceCeiling } from '../../../shared/deal-price.ts'
import type { DealServiceClient } from './service-client.ts'

/** What the deal market pays for the next group, in words and numbers, for the admin's link test. */
export interface MarketPlan {
  /** Copies of the next group the market will make; 0 when it makes none (off, or blocked). */
  copies: number
  /** The most a copy costs a TiB-month, attoFIL; undefined when no price can be worked out. */
  maxPerTiBMonth?: bigint
  /** The FIL price in USD the ceiling was worked out with, when known. */
  filUsd?: number
  why: string
}

/** The price of unverified deals: the providers' asks, up to DEAL_MAX_PRICE_PER_TIB_MONTH (FIL, or USD through the ticker). */
export interface MarketPricing {
  /** Works the ceiling out for this pass (a USD one at the ticker's price); keeps the last one when the service does not answer. */
  read(): Promise<void>
  /** The ceiling in attoFIL per TiB-month; undefined without one, or while a USD one cannot be worked out. */
  ceiling(): bigint | undefined
  /** Set while a USD ceiling has no FIL price to be worked out with: no unverified deal is proposed then. */
  problem(): string | undefined
  /** Records what a proposal paid, for the plan's words. */
  proposed(provider: string, perGiBEpoch: bigint): void
  plan(o: { copies: number; verified: boolean; blocked?: string }): MarketPlan
}

export function createMarketPricing(o: { ceiling?: PriceCeiling; pricePerGiBEpoch: string; service: DealServiceClient }): MarketPricing {
  const given = o.ceiling
  let filUsd: number | undefined
  let last: { provider: string; perTiBMonth: bigint } | undefined
  const ceiling = () => (given ? ceilingInAttoFil(given, filUsd) : undefined)
  const setting = given && `DEAL_MAX_PRICE_PER_TIB_MONTH ${given.amount} ${given.currency}`
  const problem = () =>
    given && ceiling() === undefined
      ? `${setting} needs the price of FIL in USD, and the deal service's ticker has none right now (no exchange answered lately), so no deal is proposed until it has one`
      : undefined
  const fixed = perTiBMonth(BigInt(o.pricePerGiBEpoch))

  return {
    async read() {
      if (given?.currency !== 'USD') return
      filUsd = await o.service.filUsd().catch(() => filUsd)
    },
    ceiling,
    problem,
    proposed(provider, perGiBEpoch) {
      last = { provider, perTiBMonth: perTiBMonth(perGiBEpoch) }
    },
    plan({ copies, verified, blocked }) {
      // A market route runs only where copies are asked for (deal-work.ts): none left is the tenant's policy.
      if (copies === 0) return { copies, why: "the tenant's onboarding policy asks for no deal-market copies" }
      if (blocked) return { copies: 0, why: `no deal is proposed right now: ${blocked}` }
      if (verified) {
        return {
          copies,
          maxPerTiBMonth: fixed,
          why: `verified deals (Fil+): DataCap pays for them, at DEAL_PRICE, ${describePerTiBMonth(fixed)}`,
        }
      }
      const max = ceiling()
      if (!given || max === undefined) {
        return {
          copies,
          maxPerTiBMonth: fixed,
          why: `unverified deals at DEAL_PRICE, ${describePerTiBMonth(fixed)}: only providers asking no more take them (set DEAL_MAX_PRICE_PER_TIB_MONTH to pay the providers' own asks up to a price)`,
        }
      }
      const lastWords = last ? `; the last one went to ${last.provider} at ${describePerTiBMonth(last.perTiBMonth, filUsd)}` : ''
      return {
        copies,
        maxPerTiBMonth: max,
        ...(filUsd === undefined ? {} : { filUsd }),
        why: `unverified deals at each provider's own ask, at most ${describePerTiBMonth(max, filUsd)} (${setting}); providers asking more are not offered the group${lastWords}`,
      }
    },
  }
}
