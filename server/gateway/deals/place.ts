import { padPieceCid } from '../../shared/piece.ts'
import { randomSecret, sha256Hex } from '../../shared/secrets.ts'
import type { GroupRecord } from '../content/index.ts'
import type { TickReport } from './deal-engine.ts'
import type { GroupDeal } from './deal-store.ts'
import type { EngineContext } from './engine-context.ts'
import type { ClientFunds } from './provider-port.ts'
import { TRANSFER_PATH } from './transfer-route.ts'

export interface Placement {
  /** Proposes deals for every sendable group short of copies, to providers the deal service picks. */
  place(head: number, r: TickReport, sendable: (g: GroupRecord) => boolean): Promise<void>
  /** Why the last search for providers for a group found none (the service's reason code). */
  noProviders(groupId: number): string | undefined
  /** Set while the client address lacks the DataCap or escrow its deals need. */
  fundsError(): string | undefined
}

export function createPlacement(c: EngineContext): Placement {
  const { o } = c
  const { deals, content, providers, logger } = o
  const noProviders = new Map<number, string>()

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
    const problem = o.terms.verified
      ? funds.dataCap === null
        ? `${address} has no DataCap: it is not a verified client, so its verified deals would be refused (get DataCap from an allocator, or set DEAL_VERIFIED=false and fund escrow)`
        : funds.dataCap === 0n
          ? `the DataCap of ${address} is used up`
          : undefined
      : BigInt(o.terms.pricePerEpoch) > 0n && funds.escrow - funds.locked <= 0n
        ? `${address} has no free storage market escrow for paid deals (add funds with MarketAddBalance)`
        : undefined
    if (problem !== fundsError) {
      if (problem) logger.error({ clientAddress: address }, `no deals are proposed: ${problem}`)
      else logger.info({ clientAddress: address }, 'the client address can pay for deals again')
    }
    fundsError = problem
  }

  /**
   * The piece as this provider takes it: padded with zeros up to its minimum
   * piece size (as Lotus clients do), so a 15-byte file can be stored too.
   * Without an ask (no answer) the piece goes as it is.
   */
  async function pieceFor(g: GroupRecord, provider: string): Promise<{ pieceCid: string; pieceSize: number }> {
    const ask = await c.withTimeout((signal) => providers.ask(provider, { signal })).catch(() => null)
    let pieceSize = g.pieceSize!
    while (ask && pieceSize < ask.minPieceSize) pieceSize *= 2
    return { pieceCid: pieceSize === g.pieceSize ? g.pieceCid! : padPieceCid(g.pieceCid!, g.pieceSize!, pieceSize), pieceSize }
  }

  async function propose(g: GroupRecord, provider: string, head: number, r: TickReport) {
    const token = randomSecret(32)
    const startEpoch = head + o.terms.startOffsetEpochs
    const piece = await pieceFor(g, provider)
    const collateral = await providers.providerCollateral(piece.pieceSize, o.terms.verified).catch(() => undefined)
    // Without the bounds a provider would refuse the proposal anyway: try again on the next pass.
    if (collateral === undefined) return
    const deal = await deals.create({
      groupId: g.id,
      provider,
      pieceCid: piece.pieceCid,
      startEpoch,
      endEpoch: startEpoch + o.terms.durationEpochs,
      tokenHash: sha256Hex(token),
      proposalEpoch: head,
    })
    const proposal = {
      PieceCID: { '/': piece.pieceCid },
      PieceSize: piece.pieceSize,
      VerifiedDeal: o.terms.verified,
      Client: o.clientAddress,
      Provider: provider,
      Label: `group-${g.id}`,
      StartEpoch: deal.startEpoch,
      EndEpoch: deal.endEpoch,
      StoragePricePerEpoch: o.terms.pricePerEpoch,
      ProviderCollateral: collateral,
      ClientCollateral: '0',
    }
    const transfer = { dataRoot: (await content.carRoot(g.id))!, url: `${o.publicUrl()}${TRANSFER_PATH}/${deal.id}`, headers: { Authorization: `Bearer ${token}` }, size: g.carSize! }
    try {
      const answer = await c.withTimeout((signal) => providers.propose(proposal, transfer, { signal }))
      await deals.recordSent(deal.id, { signedProposal: answer.signedProposal, proposalCid: answer.proposalCid, answer: answer.accepted ? 'accepted' : answer.reason })
      if (answer.accepted) {
        await deals.markAccepted(deal.id, answer.proposalId)
        r.proposed++
        logger.info({ groupId: g.id, provider, pieceCid: piece.pieceCid, pieceSize: piece.pieceSize }, 'deal proposed')
      } else await c.fail(deal, answer.reason, r)
    } catch (err) {
      const reason = proposalFailure(err)
      await deals.recordSent(deal.id, { answer: reason })
      await c.fail(deal, reason, r)
    }
  }

  return {
    noProviders: (groupId) => noProviders.get(groupId),
    fundsError: () => fundsError,
    async place(head, r, sendable) {
      await checkFunds()
      if (fundsError) return
      for (const g of await content.groups()) {
        if (!sendable(g) || !g.pieceCid || !g.pieceSize || !g.carSize) continue
        if (o.terms.verified && funds?.dataCap != null && funds.dataCap < BigInt(g.pieceSize)) {
          noProviders.set(g.id, `DATACAP_TOO_LOW (${funds.dataCap} bytes left, the piece is ${g.pieceSize})`)
          continue
        }
        const history = await deals.ofGroup(g.id)
        const missing = c.copies - (await c.counting(g.id, head)).length
        if (missing <= 0) continue
        // A provider with any live deal for this piece (even one about to end or failing checks) is not asked again.
        const busy = new Set((await deals.liveOfGroup(g.id)).map((d) => d.provider))
        // Deals recorded before the proposal epoch was kept: reconstructed from the start epoch.
        const proposedAt = (d: GroupDeal) => d.proposalEpoch ?? d.startEpoch - o.terms.startOffsetEpochs
        const recentlyFailed = new Set(history.filter((d) => d.state === 'failed' && head - proposedAt(d) < c.retryAfterEpochs).map((d) => d.provider))
        const query = {
          pieceCid: g.pieceCid,
          transferSize: g.carSize,
          duration: o.terms.durationEpochs,
          storagePricePerEpoch: o.terms.pricePerEpoch,
          verifiedDeal: o.terms.verified,
          startEpochHeadOffset: o.terms.startOffsetEpochs,
        }
        let answer = await o.service.bestProviders(query)
        // The service counts deals on chain; it cannot know that one no longer serves the data or ends soon.
        // For such repairs and renewals, ask for any provider that can take the deal.
        if (answer.providers.length === 0 && (answer.reason === 'ONBOARDING_COMPLETED' || answer.reason === 'ONBOARDING_IN_PROGRESS')) {
          answer = await o.service.bestProviders({ ...query, pieceCid: undefined })
        }
        const chosen = answer.providers.filter((p) => !busy.has(p) && !recentlyFailed.has(p)).slice(0, missing)
        if (chosen.length === 0) noProviders.set(g.id, answer.reason ?? (recentlyFailed.size > 0 ? 'RECENTLY_FAILED' : 'NO_PROVIDERS_AVAILABLE'))
        else noProviders.delete(g.id)
        for (const provider of chosen) await propose(g, provider, head, r)
      }
    },
  }
}

/** Why a proposal got no answer, for the deal's record: a timeout, a provider that does not speak the protocol, or one that cannot be reached. */
function proposalFailure(err: unknown): string {
  const e = err as { name?: string; message?: string }
  const message = String(e?.message ?? err).slice(0, 200)
  if (e?.name === 'AbortError' || e?.name === 'TimeoutError' || /timed out|aborted/i.test(message)) return 'PROPOSAL_TIMEOUT'
  if (e?.name === 'WireError') return `PROVIDER_PROTOCOL_ERROR: ${message}`
  return `PROVIDER_UNREACHABLE: ${message}`
}
