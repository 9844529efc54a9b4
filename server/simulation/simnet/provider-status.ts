import { CID } from 'multiformats/cid'
import { EPOCH_SECONDS } from '../../shared/epochs.ts'
import type { Simnet } from './index.ts'
import type { TakenDeal } from './provider-deal.ts'
import { providerDraw, type ProviderKind } from './provider-kind.ts'
import {
  decodeDealStatusRequest,
  encodeDealStatusResponse,
  uuidToBytes,
  verifySecp256k1,
  type WireDealStatusResponse,
} from './provider-wire.ts'
import type { SimulatedProviders } from './sim-providers.ts'

/** How often (per status request) a Boost provider fails to look the deal up for a moment. */
const TRANSIENT_STATUS_RATE = 0.03

/** What a provider's status answers read: the chain, the simulated provider, and the deals it took over the wire. */
interface StatusSource {
  simnet: Simnet
  providers: SimulatedProviders
  providerId: string
  seed: string
  deals: ReadonlyMap<string, TakenDeal>
}

/** A provider's answer to a deal status request, as the software it runs (Boost or Curio) words it. */
export function statusResponder(o: StatusSource & { kind: ProviderKind }): (message: unknown) => Promise<Uint8Array> {
  // Boost's transient lookup failures are drawn per request: how many times each deal was asked about.
  const statusAsked = new Map<string, number>()
  return async (message) => {
    const request = decodeDealStatusRequest(message)
    const none = (error: string): WireDealStatusResponse => ({
      dealUuid: request.dealUuid,
      error,
      dealStatus: null,
      isOffline: false,
      transferSize: 0,
      nBytesReceived: 0,
    })
    const deal = o.deals.get(request.dealUuid)
    return encodeDealStatusResponse(
      o.kind === 'curio' ? await curioStatus(o, request.dealUuid, deal, none) : await boostStatus(o, statusAsked, request, deal, none),
    )
  }
}

/** boost storagemarket/lp2pimpl/net.go getDealStatus. */
async function boostStatus(
  o: StatusSource,
  statusAsked: Map<string, number>,
  request: { dealUuid: string; signature: { type: number; data: Uint8Array } },
  deal: TakenDeal | undefined,
  none: (e: string) => WireDealStatusResponse,
) {
  const { simnet, providers, providerId } = o
  if (!deal) return none(`no storage deal found with deal UUID ${request.dealUuid}`)
  // The lookups Boost makes can fail for a moment (its database, the full node's StateAccountKey, the
  // sealer's SectorsStatus); each answers a null DealStatus with one of these errors. Rare, seeded.
  const asked = (statusAsked.get(request.dealUuid) ?? 0) + 1
  statusAsked.set(request.dealUuid, asked)
  const draw = providerDraw(providerId, o.seed, 'status', request.dealUuid, asked)
  if (draw < TRANSIENT_STATUS_RATE) {
    const transient = [
      'failed to fetch deal status',
      `failed to get account key for client addr ${deal.params.clientDealProposal.proposal.Client}`,
      'getting sector status from sealer',
    ]
    return none(transient[Math.floor((draw / TRANSIENT_STATUS_RATE) * transient.length)])
  }
  // Only the deal's client may ask: its signature over the UUID's 16 bytes, checked against the client's account key.
  if (!verifySecp256k1(deal.params.clientDealProposal.proposal.Client, uuidToBytes(request.dealUuid), request.signature))
    return none('signature verification failed')
  const state = providers.proposalState(providerId, request.dealUuid)
  const proposal = deal.params.clientDealProposal.proposal
  let checkpoint = 'Accepted'
  let sealingStatus = ''
  let chainDealId = 0
  let publishCid: CID | null = null
  if (state.state === 'published') {
    chainDealId = state.dealId
    publishCid = CID.parse(state.publishCid)
    const sealed = ((await simnet.getDeal(state.dealId))?.state.SectorStartEpoch ?? -1) >= 0
    // dealcheckpoints: PublishConfirmed, then AddedPiece once handed to the sealer, IndexedAndAnnounced, Complete.
    checkpoint = sealed ? 'IndexedAndAnnounced' : 'AddedPiece'
    sealingStatus = sealed ? 'Proving' : 'PreCommit1'
  } else if (state.state === 'failed') {
    checkpoint = 'Complete'
  } else if (state.state === 'transferring' && state.bytesReceived >= deal.params.transfer.size) {
    checkpoint = 'Transferred'
  }
  return {
    dealUuid: request.dealUuid,
    error: '',
    isOffline: false,
    dealStatus: {
      error: state.state === 'failed' ? state.reason : state.state === 'unknown' ? 'deal lost by the provider' : '',
      status: checkpoint,
      sealingStatus,
      proposal,
      signedProposalCid: deal.signedProposalCid,
      publishCid,
      chainDealId,
    },
    transferSize: deal.params.transfer.size,
    nBytesReceived: state.state === 'transferring' ? state.bytesReceived : deal.params.transfer.size,
  }
}

/**
 * Curio's PipelineGC deletes finished deals from market_mk12_deal_pipeline (sealed, and indexed when
 * asked) on a harmony task every SDRPipelineGCInterval, 19 minutes (curio tasks/gc/pipeline_meta_gc.go,
 * cleanupMK12DealPipeline): here, every 38 epochs of the chain.
 */
const PIPELINE_GC_EPOCHS = (19 * 60) / EPOCH_SECONDS

/** The first pipeline clean-up after `epoch`: a deal sealed then leaves the pipeline there. */
export const curioCleanedUpAt = (epoch: number) => (Math.floor(epoch / PIPELINE_GC_EPOCHS) + 1) * PIPELINE_GC_EPOCHS

/**
 * curio market/mk12/mk12_utils.go GetDealStatus: no signature check; a UUID
 * it never took fails its database lookup; while the deal is in the
 * pipeline the answer is "Processing" with no publish CID and ChainDealID
 * 0, even once published and sealed (the branch for deals past publishing
 * builds an answer and drops it); only once the pipeline's clean-up has
 * removed it (curioCleanedUpAt) are both told. Transfer sizes are always
 * answered as 1.
 */
async function curioStatus(
  o: StatusSource,
  dealUuid: string,
  deal: TakenDeal | undefined,
  none: (e: string) => WireDealStatusResponse,
): Promise<WireDealStatusResponse> {
  const { simnet, providers, providerId } = o
  if (!deal) return none('failed to get sealed deal status')
  const state = providers.proposalState(providerId, dealUuid)
  const activation = state.state === 'published' ? ((await simnet.getDeal(state.dealId))?.state.SectorStartEpoch ?? -1) : -1
  const cleanedUp = state.state === 'published' && activation >= 0 && simnet.headEpoch() >= curioCleanedUpAt(activation)
  return {
    dealUuid,
    error: '',
    isOffline: false,
    dealStatus: {
      error: state.state === 'failed' ? state.reason : state.state === 'unknown' ? 'deal lost by the provider' : '',
      status: cleanedUp ? 'Sealed' : 'Processing',
      sealingStatus: cleanedUp ? 'Sealed and Indexed' : 'Not assigned to sector',
      proposal: deal.params.clientDealProposal.proposal,
      signedProposalCid: deal.signedProposalCid,
      publishCid: cleanedUp ? CID.parse(state.publishCid) : null,
      chainDealId: cleanedUp ? state.dealId : 0,
    },
    transferSize: 1,
    nBytesReceived: 1,
  }
}
