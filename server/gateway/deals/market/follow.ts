import type { DealProposal } from '../../../network/types.ts'
import { paddedPieceSize } from '../../../shared/piece.ts'
import { createChainMatcher, sameAddress } from './chain-match.ts'
import { createNote } from '../note.ts'
import { createPacer, inChainTime } from '../pacer.ts'
import type { GroupDeal, RouteContext, TickReport } from '../types.ts'
import type { MarketRouteOptions } from './types.ts'

/** "No such deal" answers in a row, each a status poll apart, before a proposal counts as lost. */
const LOST_AFTER_NOT_FOUND = 3

/**
 * After the chain could not be asked about a deal (a busy or rate-limiting node, a timeout, a 5xx), it
 * is asked again after a wait of chain time that doubles from one epoch up to ten minutes.
 */
const CHAIN_BACKOFF = { firstMs: 30_000, maxMs: 10 * 60_000 }

export interface Follower {
  /** Proposals the providers accepted: published (a chain deal id), failed, lost, or past their start. */
  proposals(head: number, r: TickReport): Promise<void>
  /** Deals on chain: published → active when sealed; failed when never sealed or not what we signed; ended when slashed or expired. */
  chain(head: number, r: TickReport): Promise<void>
}

/**
 * Follows each deal with its provider (deal status, every `statusPollMs` of
 * chain time, not every pass: it is a libp2p round trip per deal) and then on
 * chain. A provider's word is not trusted for what counts: a deal counts as a
 * copy only once the chain shows the piece, size, provider and client we signed.
 * Nor is its silence: each proposal is looked for among the market's new deals
 * (chain-match.ts), as Curio names a deal only long after publishing it.
 */
export function createFollower(c: RouteContext, o: MarketRouteOptions): Follower {
  const { deals } = c
  const { providers } = o
  const polls = createPacer<number>({ now: c.now, everyMs: inChainTime(o.statusPollMs, providers.epochSeconds) })
  const notFound = new Map<number, number>()
  // Due every pass while the chain answers; after it could not be asked, once the back-off has passed.
  const chainChecks = createPacer<number>({
    now: c.now,
    everyMs: 0,
    backoff: {
      firstMs: inChainTime(CHAIN_BACKOFF.firstMs, providers.epochSeconds),
      maxMs: inChainTime(CHAIN_BACKOFF.maxMs, providers.epochSeconds),
    },
  })
  const unasked = createNote<string>({
    key: () => 'unasked',
    said: (reason) =>
      c.logger.warn({ reason }, 'the chain could not be asked about deals; they stay as they are and are asked again later'),
    cleared: () => c.logger.info('the chain answers about deals again'),
  })
  let clientId: string | null | undefined
  /** The client's ID address, as the chain's deals name it; throws when the chain could not be asked. */
  const clientIdOf = async () => (clientId ??= await providers.idAddress(o.clientAddress))
  const matcher = createChainMatcher(c, o)

  /** The provider's view of a deal, or undefined when it is not time to ask yet (or it did not answer). */
  async function status(d: GroupDeal) {
    if (!polls.due(d.id)) return undefined
    polls.done(d.id)
    const s = await c.withTimeout((signal) => providers.proposalState(d.provider, d.proposalId!, { signal })).catch(() => undefined)
    notFound.set(d.id, s?.state === 'unknown' ? (notFound.get(d.id) ?? 0) + 1 : 0)
    return s
  }

  /** What is kept per deal is for deals still asked about (proposed or published); the rest is dropped. */
  let proposedIds = new Set<number>()
  const keepOnly = (asked: Set<number>) => {
    polls.keepOnly(asked)
    for (const id of notFound.keys()) if (!asked.has(id)) notFound.delete(id)
  }

  /**
   * What on chain differs from what we signed, or undefined when it is our deal. Throws when the chain
   * could not be asked the client's ID address (a busy node is no evidence either way).
   */
  async function mismatch(d: GroupDeal, p: DealProposal): Promise<string | undefined> {
    const client = await clientIdOf()
    const pieceSize = d.transferSize === undefined ? undefined : paddedPieceSize(d.transferSize)
    if (p.PieceCID['/'] !== d.pieceCid) return `piece ${p.PieceCID['/']}`
    if (pieceSize !== undefined && p.PieceSize !== pieceSize) return `piece size ${p.PieceSize}`
    if (!sameAddress(p.Provider, d.provider)) return `provider ${p.Provider}`
    if (!sameAddress(p.Client, client) && !sameAddress(p.Client, o.clientAddress)) return `client ${p.Client}`
    return undefined
  }

  /**
   * What the chain says of a deal, and whether it is ours: `absent` only on the node's own "not found";
   * undefined when the chain could not be asked (then the deal is asked about again after a back-off).
   */
  async function ask(d: GroupDeal, head: number) {
    try {
      const chain = await providers.dealOnChain(d.dealId!, head)
      const wrong = chain && (await mismatch(d, chain.proposal))
      chainChecks.done(d.id)
      unasked.set(undefined)
      return chain ? { chain, wrong } : ('absent' as const)
    } catch (err) {
      chainChecks.failed(d.id)
      unasked.set((err as Error)?.message ?? String(err))
      return undefined
    }
  }

  /** One published or active deal as the chain shows it; nothing changes when the chain could not be asked. */
  async function onChain(d: GroupDeal, head: number, r: TickReport): Promise<void> {
    if (!chainChecks.due(d.id)) return
    const answer = await ask(d, head)
    if (answer === undefined) return
    if (answer === 'absent') {
      // The market removes a deal once it is terminated or expired ("deal not found"): what we recorded tells which.
      if (d.state === 'active') await deals.markEnded(d.id, { code: head >= d.endEpoch ? 'EXPIRED' : 'SLASHED' })
      else if (head >= d.startEpoch) await c.fail(d, { code: 'NOT_ON_CHAIN' }, r)
      return
    }
    const { chain, wrong } = answer
    if (wrong) await c.fail(d, { code: 'CHAIN_DEAL_MISMATCH', detail: `deal ${d.dealId} on chain has ${wrong}, not what was signed` }, r)
    else if (chain.status === 'active' && d.state === 'published') {
      if (await deals.markActive(d.id)) r.activated++
    } else if (chain.status === 'published-expired') await c.fail(d, { code: 'NOT_SEALED_IN_TIME' }, r)
    else if (chain.status === 'slashed') await deals.markEnded(d.id, { code: 'SLASHED' })
    else if (chain.status === 'expired') await deals.markEnded(d.id, { code: 'EXPIRED' })
  }

  return {
    async proposals(head, r) {
      const proposed = await deals.inState('proposed', 'market')
      proposedIds = new Set(proposed.map((d) => d.id))
      const walked = await matcher.walk(proposed, head, clientIdOf)
      for (const d of proposed) {
        const found = walked.matched.get(d.id)
        if (found !== undefined) {
          if (await deals.markPublished(d.id, { dealId: found })) r.published++
          continue
        }
        const s = await status(d)
        if (s?.state === 'published') {
          if (await deals.markPublished(d.id, { dealId: s.dealId })) r.published++
        } else if (s?.state === 'failed') await c.fail(d, { code: 'PROVIDER_FAILED', detail: s.reason }, r)
        else if (s?.state === 'unknown' && notFound.get(d.id)! >= LOST_AFTER_NOT_FOUND) await c.fail(d, { code: 'PROPOSAL_LOST' }, r)
        // Past its start with no deal on chain (every deal published by now was read) and none the provider
        // names: it never will start. While the chain cannot be read, nothing is given up on.
        else if (head >= d.startEpoch && walked.complete) await c.fail(d, { code: 'PROPOSAL_EXPIRED' }, r)
      }
    },
    async chain(head, r) {
      // A published deal whose provider reports that sealing failed will never start: ask another provider now.
      const published = await deals.inState('published', 'market')
      keepOnly(new Set([...proposedIds, ...published.map((d) => d.id)]))
      for (const d of published) {
        if (!d.proposalId) continue
        const s = await status(d)
        if (s?.state === 'failed') await c.fail(d, { code: 'PROVIDER_FAILED', detail: s.reason }, r)
      }
      const onChainNow = [...(await deals.inState('published', 'market')), ...(await deals.inState('active', 'market'))]
      chainChecks.keepOnly(new Set(onChainNow.map((d) => d.id)))
      for (const d of onChainNow) await onChain(d, head, r)
    },
  }
}
