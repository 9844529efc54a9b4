import { createNote } from '../note.ts'
import type { StorageRoute } from '../route.ts'
import type { RouteContext } from '../types.ts'
import { createFollower } from './follow.ts'
import { createMarketFunds } from './funds.ts'
import { createPieceLimit } from './piece-limit.ts'
import { placeDeals } from './place.ts'
import { createMarketPricing } from './pricing.ts'
import { marketProgress } from './progress.ts'
import type { MarketRouteOptions } from './types.ts'

/**
 * The deal market as a storage route: a group's piece is proposed (mk1.2
 * over libp2p, as a Boost client does) to providers the deal service picks,
 * fetched by them from the gateway over HTTP, published and sealed; each
 * deal is followed with its provider and on chain, and renewed
 * `renewBeforeEpochs` before it ends. Copies per group: DEAL_COPIES, else
 * the tenant's onboarding policy as the deal service says it.
 */
export function createMarketRoute(c: RouteContext, o: MarketRouteOptions): StorageRoute {
  const { providers } = o
  const { logger } = c
  const funds = createMarketFunds({ providers, clientAddress: o.clientAddress, terms: o.terms, logger })
  const follower = createFollower(c, o)
  const pieceLimit = createPieceLimit({
    service: o.service,
    providers,
    content: c.content,
    logger,
    now: c.now,
    withTimeout: (run) => c.withTimeout(run),
  })
  const pricing = createMarketPricing({ ceiling: o.terms.maxPrice, pricePerGiBEpoch: o.terms.pricePerGiBEpoch, service: o.service })
  const pricingNote = createNote<string>({
    key: (words) => words,
    said: (words) => logger.error(`no deals are proposed: ${words}`),
    cleared: () => logger.info('the FIL price in USD is known again: deals are proposed under DEAL_MAX_PRICE_PER_TIB_MONTH'),
  })
  const noProviders = new Map<number, string>()
  const serviceDown = createNote<string>({
    key: () => 'down',
    said: (err) => logger.warn({ err }, 'deal service unreachable; retrying every pass'),
    cleared: () => logger.info('the deal service answers again'),
  })
  let copies = o.copies ?? 3
  /** The chain head of the last pass, and the earliest end of the active deals then. */
  let head: number | undefined
  let firstDealEnd: number | undefined
  const ctx = { ...c, epochSeconds: providers.epochSeconds }

  const route: StorageRoute = {
    name: 'market',
    warm: false,
    required: () => copies,
    chainHead: () => providers.chainHead(),
    lasting: (d, at) => d.endEpoch - at > o.renewBeforeEpochs,
    async follow(at, r) {
      head = at
      await follower.proposals(at, r)
      await follower.chain(at, r)
      const ends = (await c.deals.inState('active', 'market')).map((d) => d.endEpoch)
      firstDealEnd = ends.length > 0 ? Math.min(...ends) : undefined
    },
    async place(at, r, sendable) {
      try {
        if (o.copies === undefined) copies = await o.service.requiredCopies()
        // A policy of no deal-market copies: no deals, and no DataCap or escrow to ask for.
        if (copies > 0) {
          // Before any group fills up at a size the providers cannot take.
          await pieceLimit.check()
          await funds.read()
          await pricing.read()
          // A USD ceiling with no FIL price blocks unverified deals only: verified ones pay DEAL_PRICE.
          pricingNote.set(funds.verified() ? undefined : pricing.problem())
          if (!funds.problem() && !pricingNote.current) await placeDeals(ctx, o, route, funds, pricing, noProviders, at, r, sendable)
        }
        serviceDown.set(undefined)
        return true
      } catch (err) {
        // Deal service down: nothing new is proposed, everything already placed goes on.
        serviceDown.set((err as Error).message)
        return false
      }
    },
    transferPending: (_groupId, live) => live.some((d) => d.route === route.name && (d.state === 'proposing' || d.state === 'proposed')),
    // A published deal cannot be cancelled on chain: it runs to its end epoch, and is neither renewed nor repaired.
    retire: async (live) => ({ ended: 0, toTerm: live.filter((d) => d.route === route.name).length }),
    progress: (groupId, deals) =>
      marketProgress(
        deals.filter((d) => d.route === route.name),
        {
          copies,
          head,
          epochSeconds: providers.epochSeconds,
          noProviders: noProviders.get(groupId),
          serviceError: serviceDown.current,
          fundsError: funds.problem(),
          priceError: pricingNote.current,
          kind: funds.kind(),
        },
      ),
    standing() {
      const client = funds.client()
      const dealsUntilMs =
        firstDealEnd === undefined || head === undefined ? undefined : c.now() + (firstDealEnd - head) * providers.epochSeconds * 1000
      const blocked = funds.problem() ?? pricingNote.current
      return {
        market: {
          kind: funds.kind(),
          plan: pricing.plan({ copies, verified: funds.verified(), blocked }),
          ...(blocked ? { blocked } : {}),
          ...(client ? { funds: { ...client, ...(dealsUntilMs === undefined ? {} : { dealsUntilMs }) } } : {}),
        },
      }
    },
    retrieveBlock: (d, cid, signal) => providers.retrieveBlock(d.provider, d.pieceCid, cid, { signal }),
    retrievePiece: (d, size, signal) => providers.retrievePiece(d.provider, d.pieceCid, size, { signal }),
    stop: async () => {},
  }
  return route
}
