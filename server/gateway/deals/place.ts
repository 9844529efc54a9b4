import { isNetworkError } from '../../network/errors.ts'
import { padPieceCid, piecePricePerEpoch, unpaddedPieceSize } from '../../shared/piece.ts'
import { randomSecret, sha256Hex } from '../../shared/secrets.ts'
import type { GroupRecord } from '../content/index.ts'
import type { ClientFunds } from './provider-port.ts'
import { TRANSFER_PATH } from './transfer-route.ts'
import type { DealKind, EngineContext, GroupDeal, TickReport } from './types.ts'

/** FIP-0118: from network version 29 the verified registry refuses every write, so no deal can be verified. */
export const FIL_PLUS_ENDS_AT_NETWORK_VERSION = 29

export interface Placement {
  /** Proposes deals for every sendable group short of copies, to providers the deal service picks. */
  place(head: number, r: TickReport, sendable: (g: GroupRecord) => boolean): Promise<void>
  /** Why the last search for providers for a group found none (the service's reason code, or what ruled each out). */
  noProviders(groupId: number): string | undefined
  /** Set while the client address lacks the DataCap or escrow its deals need. */
  fundsError(): string | undefined
  /** The client address's DataCap and market escrow, as last read. */
  clientFunds(): ClientFunds | undefined
  /** Whether new deals are verified (Fil+), and why not when the operator asked for them. */
  dealKind(): DealKind
}

/** The piece as one provider is offered it. */
interface Offer {
  pieceCid: string
  pieceSize: number
  /** What the provider downloads: the CAR, then zeros up to the unpadded piece size. */
  transferSize: number
  pricePerEpoch: bigint
}

export function createPlacement(c: EngineContext): Placement {
  const { o } = c
  const { deals, content, providers, logger } = o
  const noProviders = new Map<number, string>()
  let networkVersion: number | undefined

  const verifiedNow = () => o.terms.verified && (networkVersion === undefined || networkVersion < FIL_PLUS_ENDS_AT_NETWORK_VERSION)

  async function readNetworkVersion(): Promise<void> {
    const previous = verifiedNow()
    networkVersion = await providers.networkVersion().catch(() => networkVersion)
    if (o.terms.verified && previous && !verifiedNow()) {
      logger.warn(
        { networkVersion },
        'the network has reached FIP-0118 (network version 29): Fil+ has ended, new deals are proposed as unverified deals',
      )
    }
  }

  /**
   * Whether the client address can pay for the deals it would propose: a
   * verified deal needs DataCap (a provider refuses it otherwise, or it fails
   * at publish), a paid one free market escrow. Checked on every pass, said
   * once in the log when it changes, and shown as the groups' reason.
   */
  let funds: ClientFunds | undefined
  let fundsError: string | undefined
  async function checkFunds(): Promise<void> {
    try {
      funds = await providers.clientFunds(o.clientAddress)
    } catch {
      return // The chain did not answer: keep what we knew.
    }
    const address = o.clientAddress
    const problem = verifiedNow()
      ? funds.dataCap === null
        ? `${address} has no DataCap: it is not a verified client, so its verified deals would be refused (get DataCap from an allocator, or set DEAL_VERIFIED=false and fund escrow)`
        : funds.dataCap === 0n
          ? `the DataCap of ${address} is used up`
          : undefined
      : BigInt(o.terms.pricePerGiBEpoch) > 0n && funds.escrow - funds.locked <= 0n
        ? `${address} has no free storage market escrow for paid deals (add funds with MarketAddBalance)`
        : undefined
    if (problem !== fundsError) {
      if (problem) logger.error({ clientAddress: address }, `no deals are proposed: ${problem}`)
      else logger.info({ clientAddress: address }, 'the client address can pay for deals again')
    }
    fundsError = problem
  }

  /**
   * The piece as this provider would take it, or why it would not. Its ask
   * gives the piece sizes and prices it takes: a piece below its minimum is
   * padded with zeros up to it (the transfer too, so that what it downloads
   * is exactly the proposed piece: Curio refuses a PieceSize that is not the
   * natural size of the transfer, curio market/mk12/mk12.go), within
   * `maxPaddingFactor`, since DataCap and price are paid on the padded size.
   * A provider that serves no HTTP retrieval could never be checked or read
   * back, so the group could never be offloaded: it is not asked.
   */
  async function offerFor(g: GroupRecord, provider: string, verified: boolean): Promise<Offer | { refused: string }> {
    const pieceSize = g.pieceSize!
    const ask = await c.withTimeout((signal) => providers.ask(provider, { signal })).catch(() => null)
    let target = pieceSize
    if (ask) {
      if (pieceSize > ask.maxPieceSize) return { refused: `takes pieces of at most ${ask.maxPieceSize} bytes` }
      while (target < ask.minPieceSize) target *= 2
      if (target / pieceSize > o.terms.maxPaddingFactor) {
        return {
          refused: `takes pieces of at least ${ask.minPieceSize} bytes; this one is ${pieceSize} (padding it ×${target / pieceSize} is over DEAL_MAX_PADDING ${o.terms.maxPaddingFactor})`,
        }
      }
    }
    const pricePerEpoch = piecePricePerEpoch(BigInt(o.terms.pricePerGiBEpoch), target)
    if (ask) {
      // The check Boost and Curio make (boost storagemarket/deal_acceptance.go): our price for the piece against their ask for it.
      const asked = piecePricePerEpoch(verified ? ask.verifiedPrice : ask.price, target)
      if (pricePerEpoch < asked) return { refused: `asks ${asked} attoFIL per epoch for this piece, ${pricePerEpoch} offered (DEAL_PRICE)` }
    }
    const http = await c.withTimeout((signal) => providers.servesHttpRetrieval(provider, { signal })).catch(() => undefined)
    if (http === false)
      return { refused: 'serves no HTTP retrieval, so its copy could never be checked or read back and the local copy would have to stay' }
    return {
      pieceCid: target === pieceSize ? g.pieceCid! : padPieceCid(g.pieceCid!, pieceSize, target),
      pieceSize: target,
      transferSize: target === pieceSize ? g.carSize! : unpaddedPieceSize(target),
      pricePerEpoch,
    }
  }

  /** Proposes the group to one provider; false when it was not sent (the chain did not answer: try again next pass). */
  async function propose(g: GroupRecord, provider: string, offer: Offer, verified: boolean, head: number, r: TickReport): Promise<boolean> {
    const collateral = await providers.providerCollateral(offer.pieceSize, verified).catch(() => undefined)
    // Without the bounds a provider would refuse the proposal anyway: try again on the next pass.
    if (collateral === undefined) return false
    const dataRoot = (await content.carRoot(g.id))!
    const token = randomSecret(32)
    const startEpoch = head + o.terms.startOffsetEpochs
    const deal = await deals.create({
      groupId: g.id,
      provider,
      pieceCid: offer.pieceCid,
      startEpoch,
      endEpoch: startEpoch + o.terms.durationEpochs,
      tokenHash: sha256Hex(token),
      proposalEpoch: head,
      transferSize: offer.transferSize,
    })
    const proposal = {
      PieceCID: { '/': offer.pieceCid },
      PieceSize: offer.pieceSize,
      VerifiedDeal: verified,
      Client: o.clientAddress,
      Provider: provider,
      // The payload root, as Boost's client labels its deals (boost cmd/boost/deal_cmd.go).
      Label: dataRoot,
      StartEpoch: deal.startEpoch,
      EndEpoch: deal.endEpoch,
      StoragePricePerEpoch: offer.pricePerEpoch.toString(),
      ProviderCollateral: collateral,
      ClientCollateral: '0',
    }
    const transfer = {
      dataRoot,
      url: `${o.publicUrl()}${TRANSFER_PATH}/${deal.id}`,
      headers: { Authorization: `Bearer ${token}` },
      size: offer.transferSize,
    }
    try {
      const answer = await c.withTimeout((signal) => providers.propose(proposal, transfer, { signal }), o.proposalTimeoutMs)
      await deals.recordSent(deal.id, {
        signedProposal: answer.signedProposal,
        proposalCid: answer.proposalCid,
        answer: answer.accepted ? 'accepted' : answer.reason,
      })
      if (answer.accepted) {
        await deals.markAccepted(deal.id, answer.proposalId)
        r.proposed++
        logger.info({ groupId: g.id, provider, pieceCid: offer.pieceCid, pieceSize: offer.pieceSize, verified }, 'deal proposed')
      } else await c.fail(deal, answer.reason, r)
    } catch (err) {
      const reason = proposalFailure(err)
      await deals.recordSent(deal.id, { answer: reason })
      await c.fail(deal, reason, r)
    }
    return true
  }

  return {
    noProviders: (groupId) => noProviders.get(groupId),
    fundsError: () => fundsError,
    clientFunds: () => funds,
    dealKind: () => ({
      verified: verifiedNow(),
      networkVersion,
      note:
        o.terms.verified && !verifiedNow()
          ? `Fil+ ended at network version ${FIL_PLUS_ENDS_AT_NETWORK_VERSION} (FIP-0118): deals are unverified, no DataCap is needed`
          : undefined,
    }),
    async place(head, r, sendable) {
      // An Onchain-Cloud-only policy (DEAL_COPIES=0): no deals, and no DataCap or escrow to ask for.
      if (c.copies === 0) return
      await readNetworkVersion()
      const verified = verifiedNow()
      await checkFunds()
      if (fundsError) return
      // The market locks price × duration of the client's escrow for each deal it publishes: what this pass
      // proposes must fit in what is free, together.
      let escrowFree = funds ? funds.escrow - funds.locked : undefined
      for (const g of await content.groups()) {
        if (!sendable(g) || !g.pieceCid || !g.pieceSize || !g.carSize) continue
        if (verified && funds?.dataCap != null && funds.dataCap < BigInt(g.pieceSize)) {
          noProviders.set(g.id, `DATACAP_TOO_LOW (${funds.dataCap} bytes left, the piece is ${g.pieceSize})`)
          continue
        }
        const history = (await deals.ofGroup(g.id)).filter((d) => d.route === 'market')
        const missing = c.copies - (await c.counting(g.id, head)).length
        if (missing <= 0) continue
        // A provider with any live deal for this piece (even one about to end or failing checks) is not asked again.
        const busy = new Set((await deals.liveOfGroup(g.id)).filter((d) => d.route === 'market').map((d) => d.provider))
        // Deals recorded before the proposal epoch was kept: reconstructed from the start epoch.
        const proposedAt = (d: GroupDeal) => d.proposalEpoch ?? d.startEpoch - o.terms.startOffsetEpochs
        const notAgain = new Set(
          history.filter((d) => d.state === 'failed' && head - proposedAt(d) < c.retryAfterEpochs).map((d) => d.provider),
        )
        // A proposal that got no answer may still have been taken: that provider may hold a deal for the piece
        // that we do not know of, so it is never asked again for this group (no piece stored twice by one provider).
        for (const d of history) if (d.state === 'failed' && /^PROPOSAL_(TIMEOUT|UNANSWERED)/.test(d.reason ?? '')) notAgain.add(d.provider)
        const query = {
          pieceCid: g.pieceCid,
          transferSize: g.carSize,
          duration: o.terms.durationEpochs,
          // Per GiB, as the deal service's API takes it; it works out the price of the piece itself.
          storagePricePerEpoch: o.terms.pricePerGiBEpoch,
          verifiedDeal: verified,
          startEpochHeadOffset: o.terms.startOffsetEpochs,
        }
        let answer = await o.service.bestProviders(query)
        // The service counts deals on chain; it cannot know that one no longer serves the data or ends soon.
        // For such repairs and renewals, ask for any provider that can take the deal.
        if (answer.providers.length === 0 && (answer.reason === 'ONBOARDING_COMPLETED' || answer.reason === 'ONBOARDING_IN_PROGRESS')) {
          answer = await o.service.bestProviders({ ...query, pieceCid: undefined })
        }
        const candidates = answer.providers.filter((p) => !busy.has(p) && !notAgain.has(p))
        const refusals: string[] = []
        let sent = 0
        for (const provider of candidates) {
          if (sent >= missing) break
          const offer = await offerFor(g, provider, verified)
          const locks = 'refused' in offer ? 0n : offer.pricePerEpoch * BigInt(o.terms.durationEpochs)
          if ('refused' in offer) refusals.push(`${provider} ${offer.refused}`)
          else if (escrowFree !== undefined && locks > escrowFree)
            refusals.push(`${provider}: the deal would lock ${locks} attoFIL of escrow, ${escrowFree} is free`)
          else if (await propose(g, provider, offer, verified, head, r)) {
            sent++
            if (escrowFree !== undefined) escrowFree -= locks
          }
        }
        if (sent > 0) noProviders.delete(g.id)
        else if (refusals.length > 0) noProviders.set(g.id, `NO_SUITABLE_PROVIDER: ${refusals.join('; ')}`)
        else if (candidates.length === 0)
          noProviders.set(g.id, answer.reason ?? (notAgain.size > 0 ? 'RECENTLY_FAILED' : 'NO_PROVIDERS_AVAILABLE'))
      }
    },
  }
}

/**
 * Why a proposal got no answer, for the deal's record: a timeout or no answer after it was sent (the
 * provider may have taken it), a provider that does not speak the protocol, or one that cannot be reached.
 */
function proposalFailure(err: unknown): string {
  const message = String((err as Error)?.message ?? err).slice(0, 200)
  if (!isNetworkError(err)) return `PROVIDER_UNREACHABLE: ${message}`
  if (err.code === 'TIMED_OUT') return 'PROPOSAL_TIMEOUT'
  if (err.unanswered) return `PROPOSAL_UNANSWERED: ${message}`
  if (err.code === 'PROTOCOL_ERROR') return `PROVIDER_PROTOCOL_ERROR: ${message}`
  if (err.code === 'REFUSED') return `PROVIDER_REFUSED: ${err.providerReason ?? message}`
  return `PROVIDER_UNREACHABLE: ${message}`
}
