import type { GroupRecord } from '../../content/index.ts'
import { countingCopies, providersToSkip } from '../copies.ts'
import type { StorageRoute } from '../route.ts'
import type { RouteContext, TickReport } from '../types.ts'
import { perGiBEpochAtMost } from '../../../shared/deal-price.ts'
import type { MarketFunds } from './funds.ts'
import type { MarketPricing } from './pricing.ts'
import { offerFor } from './offer.ts'
import { propose } from './propose.ts'
import type { MarketRouteOptions } from './types.ts'

/** One pass of placing deals: what the pass knows beside the route's options. */
interface Pass {
  head: number
  verified: boolean
  /** The most an unverified deal may cost, attoFIL per TiB-month (DEAL_MAX_PRICE_PER_TIB_MONTH); undefined: DEAL_PRICE is offered. */
  ceiling?: bigint
  /** Escrow not yet locked, less what this pass proposed; undefined when not known. */
  escrowFree?: bigint
}

/**
 * Proposes deals for every sendable group short of copies, to providers the
 * deal service picks, within the client's funds. Returns, per group, why no
 * provider took it when none did (for its reason), or undefined.
 */
export async function placeDeals(
  c: RouteContext & { epochSeconds: number },
  o: MarketRouteOptions,
  route: Pick<StorageRoute, 'name' | 'lasting' | 'required'>,
  funds: MarketFunds,
  pricing: MarketPricing,
  noProviders: Map<number, string>,
  head: number,
  r: TickReport,
  sendable: (g: GroupRecord) => boolean,
): Promise<void> {
  // The market locks price × duration of the client's escrow for each deal it publishes: what this pass
  // proposes must fit in what is free, together.
  const client = funds.client()
  const verified = funds.verified()
  const pass: Pass = {
    head,
    verified,
    ceiling: verified ? undefined : pricing.ceiling(),
    escrowFree: client ? client.escrow - client.locked : undefined,
  }
  for (const g of await c.content.groups()) {
    if (!sendable(g) || !g.pieceCid || !g.pieceSize || !g.carSize) continue
    if (pass.verified && client?.dataCap != null && client.dataCap < BigInt(g.pieceSize)) {
      noProviders.set(g.id, `DATACAP_TOO_LOW (${client.dataCap} bytes left, the piece is ${g.pieceSize})`)
      continue
    }
    const history = await c.deals.ofGroup(g.id, 'market')
    const missing = route.required() - countingCopies(route, history, head).length
    if (missing <= 0) continue
    const outcome = await placeGroup(c, { ...o, pricing }, g, history, missing, pass, r)
    if (outcome.placed) noProviders.delete(g.id)
    else if (outcome.why) noProviders.set(g.id, outcome.why)
  }
}

/** Proposes one group to up to `missing` providers: whether any was sent, else why none was (when it is known). */
async function placeGroup(
  c: RouteContext & { epochSeconds: number },
  o: MarketRouteOptions & { pricing: MarketPricing },
  g: GroupRecord,
  history: Parameters<typeof providersToSkip>[0],
  missing: number,
  pass: Pass,
  r: TickReport,
): Promise<{ placed: boolean; why?: string }> {
  // A provider with a live deal for this piece (even one about to end or failing checks) is not asked again, nor one
  // that failed it lately; nor, ever, one whose proposal got no answer: it may hold a deal for the piece that we do
  // not know of (no piece stored twice by one provider).
  const skip = providersToSkip(history, { now: c.now(), epochSeconds: c.epochSeconds, retryAfterEpochs: c.retryAfterEpochs })
  const failedLately = history.some((d) => d.state === 'failed' && skip.has(d.provider))
  const query = {
    pieceCid: g.pieceCid!,
    transferSize: g.carSize!,
    duration: o.terms.durationEpochs,
    // Per GiB, as the deal service's API takes it; it works out the price of the piece itself. Under a ceiling,
    // the highest ask it allows: the service then names only providers asking no more.
    storagePricePerEpoch: pass.ceiling === undefined ? o.terms.pricePerGiBEpoch : perGiBEpochAtMost(pass.ceiling).toString(),
    verifiedDeal: pass.verified,
    startEpochHeadOffset: o.terms.startOffsetEpochs,
  }
  let answer = await o.service.bestProviders(query)
  // The service counts deals on chain; it cannot know that one no longer serves the data or ends soon.
  // For such repairs and renewals, ask for any provider that can take the deal.
  if (answer.providers.length === 0 && (answer.reason === 'ONBOARDING_COMPLETED' || answer.reason === 'ONBOARDING_IN_PROGRESS')) {
    answer = await o.service.bestProviders({ ...query, pieceCid: undefined })
  }
  const candidates = answer.providers.filter((p) => !skip.has(p))
  const refusals: string[] = []
  let sent = 0
  for (const provider of candidates) {
    if (sent >= missing) break
    const offer = await offerFor(c, o, g, provider, pass.verified, pass.ceiling)
    const locks = 'refused' in offer ? 0n : offer.pricePerEpoch * BigInt(o.terms.durationEpochs)
    if ('refused' in offer) refusals.push(`${provider} ${offer.refused}`)
    else if (pass.escrowFree !== undefined && locks > pass.escrowFree)
      refusals.push(`${provider}: the deal would lock ${locks} attoFIL of escrow, ${pass.escrowFree} is free`)
    else if (await propose(c, o, g, provider, offer, pass, r)) {
      sent++
      o.pricing.proposed(provider, offer.pricePerGiBEpoch)
      if (pass.escrowFree !== undefined) pass.escrowFree -= locks
    }
  }
  if (sent > 0) return { placed: true }
  if (refusals.length > 0) return { placed: false, why: `NO_SUITABLE_PROVIDER: ${refusals.join('; ')}` }
  if (candidates.length === 0) return { placed: false, why: answer.reason ?? (failedLately ? 'RECENTLY_FAILED' : 'NO_PROVIDERS_AVAILABLE') }
  return { placed: false }
}
