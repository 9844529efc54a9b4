import type { CID } from 'multiformats/cid'
import {
  clientDealProposalCid,
  decodeDealParams,
  decodeHttpTransferParams,
  encodeDealResponse,
  proposalSigningBytes,
  verifySecp256k1,
  type WireDealParams,
} from './provider-wire.ts'
import type { SimulatedProviders } from './sim-providers.ts'

/** A deal a provider took, as its status answers tell it back. */
export interface TakenDeal {
  params: WireDealParams
  signedProposalCid: CID
}

/** How long a stalled ('timeout') provider keeps a proposal stream open before giving up on it itself. */
const STALL_MS = 5 * 60_000

/**
 * A provider's answer to a deal proposal (DealParams): the checks the
 * software makes on the wire, then the simulated provider's decision; a
 * deal taken is kept in `deals` under its UUID for status requests.
 */
export function dealResponder(o: {
  providers: SimulatedProviders
  providerId: string
  deals: Map<string, TakenDeal>
}): (message: unknown) => Promise<Uint8Array> {
  const { providers, providerId, deals } = o

  async function takeDeal(params: WireDealParams): Promise<{ accepted: boolean; message: string }> {
    const { proposal } = params.clientDealProposal
    if (params.isOffline) return { accepted: false, message: 'offline deals are not accepted by this simulated provider' }
    // boost storagemarket/provider.go / curio mk12.go: only the http transfer type is taken for online deals here.
    if (params.transfer.type !== 'http') return { accepted: false, message: `transfer type ${params.transfer.type} is not supported` }
    let transfer: { url: string; headers: Record<string, string> }
    try {
      transfer = decodeHttpTransferParams(params.transfer.params)
    } catch (err) {
      return { accepted: false, message: `failed to de-serialize transport params bytes: ${(err as Error).message}` }
    }
    // boost deal_acceptance.go validateDealProposal / curio mk12.go validateDealProposal: the proposal names this provider.
    if (proposal.Provider !== providerId)
      return {
        accepted: false,
        message: `incorrect provider for deal; proposal.Provider: ${proposal.Provider}; provider.Address: ${providerId}`,
      }
    // boost deal_acceptance.go validateSignature / curio mk12.go: the client's signature over the proposal's CBOR.
    if (!verifySecp256k1(proposal.Client, proposalSigningBytes(params.clientDealProposal), params.clientDealProposal.signature)) {
      return { accepted: false, message: 'failed validation: invalid signature' }
    }
    const answer = await providers.propose(
      proposal,
      { ...transfer, size: params.transfer.size },
      { proposalId: params.dealUuid, signal: AbortSignal.timeout(STALL_MS) },
    )
    if (!answer.accepted) return { accepted: false, message: answer.reason }
    deals.set(params.dealUuid, { params, signedProposalCid: clientDealProposalCid(params.clientDealProposal) })
    return { accepted: true, message: '' }
  }

  return async (message) => {
    const params = decodeDealParams(message)
    const answer = await takeDeal(params)
    return encodeDealResponse(answer)
  }
}
