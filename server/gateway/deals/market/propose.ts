import { isNetworkError } from '../../../network/errors.ts'
import { failureText, type CopyFailure } from '../../../shared/contracts/copy-failure.ts'
import { randomSecret, sha256Hex } from '../../../shared/secrets.ts'
import type { GroupRecord } from '../../content/index.ts'
import type { RouteContext, TickReport } from '../types.ts'
import type { Offer } from './offer.ts'
import { TRANSFER_PATH } from './transfer-route.ts'
import type { MarketRouteOptions } from './types.ts'

/**
 * Proposes the group to one provider, as a Boost client does: the deal
 * recorded first (so a crash mid-call leaves a trace), the CAR offered under
 * a per-deal token, the answer recorded. False when it was not sent (the
 * chain did not answer the collateral bounds: try again next pass).
 */
export async function propose(
  c: RouteContext,
  o: MarketRouteOptions,
  g: GroupRecord,
  provider: string,
  offer: Offer,
  deal: { verified: boolean; head: number },
  r: TickReport,
): Promise<boolean> {
  const { providers, terms } = o
  const collateral = await providers.providerCollateral(offer.pieceSize, deal.verified).catch(() => undefined)
  // Without the bounds a provider would refuse the proposal anyway: try again on the next pass.
  if (collateral === undefined) return false
  const dataRoot = (await c.content.carRoot(g.id))!
  const token = randomSecret(32)
  const startEpoch = deal.head + terms.startOffsetEpochs
  const row = await c.deals.create({
    groupId: g.id,
    route: 'market',
    provider,
    pieceCid: offer.pieceCid,
    startEpoch,
    endEpoch: startEpoch + terms.durationEpochs,
    tokenHash: sha256Hex(token),
    proposalEpoch: deal.head,
    transferSize: offer.transferSize,
  })
  const proposal = {
    PieceCID: { '/': offer.pieceCid },
    PieceSize: offer.pieceSize,
    VerifiedDeal: deal.verified,
    Client: o.clientAddress,
    Provider: provider,
    // The payload root, as Boost's client labels its deals (boost cmd/boost/deal_cmd.go).
    Label: dataRoot,
    StartEpoch: row.startEpoch,
    EndEpoch: row.endEpoch,
    StoragePricePerEpoch: offer.pricePerEpoch.toString(),
    ProviderCollateral: collateral,
    ClientCollateral: '0',
  }
  const url = `${o.publicUrl()}${TRANSFER_PATH}/${row.id}`
  const transfer = { dataRoot, url, headers: { Authorization: `Bearer ${token}` }, size: offer.transferSize }
  try {
    const answer = await c.withTimeout((signal) => providers.propose(proposal, transfer, { signal }), o.proposalTimeoutMs)
    const said = answer.accepted ? 'accepted' : answer.reason
    await c.deals.recordSent(row.id, { signedProposal: answer.signedProposal, proposalCid: answer.proposalCid, answer: said })
    if (answer.accepted) {
      await c.deals.markProposed(row.id, { proposalId: answer.proposalId })
      r.proposed++
      c.logger.info(
        { groupId: g.id, provider, pieceCid: offer.pieceCid, pieceSize: offer.pieceSize, verified: deal.verified },
        'deal proposed',
      )
    } else await c.fail(row, { code: 'PROVIDER_DECLINED', detail: answer.reason }, r)
  } catch (err) {
    const failure = proposalFailure(err)
    await c.deals.recordSent(row.id, { answer: failureText(failure) })
    await c.fail(row, failure, r)
  }
  return true
}

/**
 * Why a proposal got no answer, for the deal's record: a timeout or no answer after it was sent (the
 * provider may have taken it), a provider that does not speak the protocol, or one that cannot be reached.
 */
function proposalFailure(err: unknown): CopyFailure {
  const message = String((err as Error)?.message ?? err).slice(0, 200)
  if (!isNetworkError(err)) return { code: 'PROVIDER_UNREACHABLE', detail: message }
  if (err.code === 'TIMED_OUT') return { code: 'PROPOSAL_TIMEOUT' }
  if (err.unanswered) return { code: 'PROPOSAL_UNANSWERED', detail: message }
  if (err.code === 'PROTOCOL_ERROR') return { code: 'PROVIDER_PROTOCOL_ERROR', detail: message }
  if (err.code === 'REFUSED') return { code: 'PROVIDER_REFUSED', detail: err.providerReason ?? message }
  return { code: 'PROVIDER_UNREACHABLE', detail: message }
}
