import { randomUUID } from 'node:crypto'
import { paddedPieceSize } from '../../shared/piece.ts'
import type { DealProposal } from '../../shared/chain.ts'
import type { Simnet } from './index.ts'
import { providerProfile } from './provider-kind.ts'
import { faultyFetch, type FaultPlan } from './faults.ts'
import { createPieceStore } from './provider-pieces.ts'
import { boostTransfer, curioTransfer, TransferFailure } from './provider-transfer.ts'

export { SimRetrievalError } from './provider-pieces.ts'

/**
 * Faults a test or demo can give one simulated provider:
 * `refuse` every proposal; `timeout` never answer (proposals and retrievals
 * hang until aborted); `corrupt` serve altered bytes on retrieval (it lies
 * about the data); `lose` drop every piece it stores, now and later.
 */
export type ProviderFault = 'refuse' | 'timeout' | 'corrupt' | 'lose'

export interface SimTransfer {
  /** Where the provider fetches the CAR (HTTP GET). */
  url: string
  headers: Record<string, string>
  /** CAR bytes the client announced. */
  size: number
}

export type SimProposalResult = { accepted: true; proposalId: string } | { accepted: false; reason: string }

export type SimProposalState =
  | { state: 'transferring'; bytesReceived: number }
  /** `publishCid`: the PublishStorageDeals message the simulated chain names the deal by. */
  | { state: 'published'; dealId: number; publishCid: string }
  | { state: 'failed'; reason: string }
  /** The provider has no record of it (it restarted before publishing). */
  | { state: 'unknown' }

export interface SimRequestOptions {
  signal?: AbortSignal
}

/**
 * The simulated network's storage providers doing what Boost or Curio (see
 * provider-kind.ts) does for a client: take a proposal, fetch the CAR over
 * HTTP as that software fetches it, check it against the piece CID, publish
 * the deal on the simulated chain, keep the bytes under `<dir>/<providerId>/`
 * and serve them back (whole piece or one block).
 */
export interface SimulatedProviders {
  /** `proposalId`: the client's deal UUID (Boost's DealParams.DealUUID); a new one when not given. */
  propose(proposal: DealProposal, transfer: SimTransfer, options?: SimRequestOptions & { proposalId?: string }): Promise<SimProposalResult>
  proposalState(providerId: string, proposalId: string): SimProposalState
  /** The stored piece (CAR bytes). Throws SimRetrievalError when the provider does not have it. */
  retrievePiece(providerId: string, pieceCid: string, options?: SimRequestOptions): AsyncIterable<Uint8Array>
  /** One block of a stored piece, as a trustless gateway would serve `?format=raw`. */
  retrieveBlock(providerId: string, pieceCid: string, blockCid: string, options?: SimRequestOptions): Promise<Uint8Array>
  /** The piece holding a block, as a provider's index answers `/ipfs/<cid>`; null when none of its pieces has it. */
  pieceOfBlock(providerId: string, blockCid: string): Promise<string | null>
  setFault(providerId: string, fault: ProviderFault | null): void
  /** Aborts running transfers. */
  close(): Promise<void>
}

export interface SimProvidersOptions {
  simnet: Simnet
  /** e.g. `<DATA_DIR>/simnet/providers` */
  dir: string
  /** Longest a CAR transfer may take. */
  transferTimeoutMs?: number
  fetch?: typeof fetch
  /** Pause between HTTP retries of a transfer (Curio sleeps 1 s; tests shorten it). */
  retryDelayMs?: number
  /** Seeded faults: some CAR downloads cut or paused part-way (faults.ts). */
  faults?: FaultPlan
}

export function createSimulatedProviders(options: SimProvidersOptions): SimulatedProviders {
  const { simnet } = options
  const pieces = createPieceStore(options.dir)
  const doFetch = options.faults ? faultyFetch(options.fetch ?? fetch, options.faults) : (options.fetch ?? fetch)
  const transferTimeoutMs = options.transferTimeoutMs ?? 10 * 60_000
  const retryDelayMs = options.retryDelayMs ?? 1000
  const proposals = new Map<string, SimProposalState>()
  const faults = new Map<string, ProviderFault>()
  const running = new Set<AbortController>()

  const hang = (signal?: AbortSignal) =>
    new Promise<never>((_, reject) => {
      if (signal?.aborted) return reject(signal.reason)
      signal?.addEventListener('abort', () => reject(signal.reason), { once: true })
    })

  /** Fetches the CAR as the provider's software does, verifies its piece CID, stores and indexes it, then publishes the deal. */
  async function transferAndPublish(proposalId: string, proposal: DealProposal, transfer: SimTransfer): Promise<void> {
    const providerId = proposal.Provider
    const controller = new AbortController()
    running.add(controller)
    const timer = setTimeout(() => controller.abort(new Error('transfer timed out')), transferTimeoutMs)
    try {
      const download = providerProfile(providerId).kind === 'curio' ? curioTransfer : boostTransfer
      await pieces.receive({
        providerId,
        pieceCid: proposal.PieceCID['/'],
        pieceSize: proposal.PieceSize,
        transferId: proposalId,
        download: (write) => download(transfer, { fetch: doFetch, signal: controller.signal, retryDelayMs, write }),
        onProgress: (bytesReceived) => proposals.set(proposalId, { state: 'transferring', bytesReceived }),
      })
      const client = (await simnet.lookupId(proposal.Client)) ?? proposal.Client
      const published = await simnet.proposeDeal({ ...proposal, Client: client })
      if (!published.accepted) throw new TransferFailure(published.reason)
      proposals.set(proposalId, { state: 'published', dealId: published.dealId, publishCid: published.publishCid })
      if (faults.get(providerId) === 'lose') await pieces.drop(providerId)
    } catch (err) {
      const reason = controller.signal.aborted ? 'TRANSFER_TIMEOUT' : err instanceof TransferFailure ? err.message : 'TRANSFER_FAILED'
      proposals.set(proposalId, { state: 'failed', reason })
    } finally {
      clearTimeout(timer)
      running.delete(controller)
    }
  }

  return {
    async propose(proposal, transfer, opts = {}) {
      const providerId = proposal.Provider
      const fault = faults.get(providerId)
      if (fault === 'timeout') return hang(opts.signal)
      if (fault === 'refuse') return { accepted: false, reason: 'BUSY' }
      const terms = await simnet.providerTerms(providerId)
      if (!terms) return { accepted: false, reason: 'PROVIDER_NOT_FOUND' }
      if (!terms.online) return { accepted: false, reason: 'SERVICE_UNAVAILABLE' }
      if (!terms.transferTypes.includes('http')) return { accepted: false, reason: 'UNSUPPORTED_TRANSFER_PROTOCOL' }
      if (proposal.PieceSize < terms.minPieceSize || proposal.PieceSize > terms.maxPieceSize)
        return { accepted: false, reason: 'PIECE_SIZE_NOT_ACCEPTED' }
      if (proposal.StartEpoch <= simnet.headEpoch()) return { accepted: false, reason: 'START_EPOCH_TOO_EARLY' }
      // As Boost does: the provider collateral must lie within the market's bounds for this piece.
      const bounds = await simnet.collateralBounds(proposal.PieceSize, proposal.VerifiedDeal)
      const collateral = BigInt(proposal.ProviderCollateral)
      if (collateral < bounds.min || collateral > bounds.max)
        return { accepted: false, reason: `proposed provider collateral ${collateral} should be between ${bounds.min} and ${bounds.max}` }
      const refusal =
        priceRefusal(proposal, terms) ?? (providerProfile(providerId).kind === 'curio' ? curioSizeRefusal(proposal, transfer) : null)
      if (refusal) return { accepted: false, reason: refusal }
      const proposalId = opts.proposalId ?? randomUUID()
      if (proposals.has(proposalId)) return { accepted: false, reason: 'DEAL_UUID_ALREADY_USED' }
      proposals.set(proposalId, { state: 'transferring', bytesReceived: 0 })
      void transferAndPublish(proposalId, proposal, transfer)
      return { accepted: true, proposalId }
    },
    proposalState(_providerId, proposalId) {
      const state = proposals.get(proposalId) ?? { state: 'unknown' }
      // After publishing, the status still tells the client when sealing failed (Boost's deal status carries the error).
      if (state.state !== 'published') return state
      const failsAt = simnet.sealingFailsAt(state.dealId)
      return failsAt !== null && simnet.headEpoch() >= failsAt ? { state: 'failed', reason: 'SEALING_FAILED' } : state
    },
    retrievePiece(providerId, pieceCid, opts = {}) {
      const fault = faults.get(providerId)
      return (async function* () {
        if (fault === 'timeout') await hang(opts.signal)
        for await (const chunk of pieces.readPiece(providerId, pieceCid, opts.signal)) {
          yield fault === 'corrupt' ? corrupt(chunk) : new Uint8Array(chunk)
        }
      })()
    },
    async retrieveBlock(providerId, pieceCid, blockCid, opts = {}) {
      if (faults.get(providerId) === 'timeout') await hang(opts.signal)
      const bytes = await pieces.readBlock(providerId, pieceCid, blockCid)
      return faults.get(providerId) === 'corrupt' ? corrupt(bytes) : bytes
    },
    pieceOfBlock: (providerId, blockCid) => pieces.pieceOfBlock(providerId, blockCid),
    setFault(providerId, fault) {
      if (fault) faults.set(providerId, fault)
      else faults.delete(providerId)
      if (fault === 'lose') void pieces.drop(providerId)
    },
    async close() {
      for (const c of running) c.abort(new Error('closing'))
    },
  }
}

const GiB = 2n ** 30n

/**
 * boost storagemarket/deal_acceptance.go validateAsk and curio market/mk12/mk12.go
 * validateAsk: the ask's price (verified or not) is per GiB per epoch; the
 * least a proposal may pay per epoch is price × PieceSize / 2^30, divided
 * as integers (big.Div truncates).
 */
export function minimumPricePerEpoch(askPricePerGiB: bigint, pieceSize: number): bigint {
  return (askPricePerGiB * BigInt(pieceSize)) / GiB
}

function priceRefusal(p: DealProposal, terms: { verifiedPrice: string; unverifiedPrice: string }): string | null {
  const min = minimumPricePerEpoch(BigInt(p.VerifiedDeal ? terms.verifiedPrice : terms.unverifiedPrice), p.PieceSize)
  const offered = BigInt(p.StoragePricePerEpoch)
  return offered < min ? `storage price per epoch less than asking price: ${offered} < ${min}` : null
}

/**
 * curio market/mk12/mk12.go processDeal: an online deal's PieceSize must be
 * exactly the padded size of Transfer.Size (go-padreader PaddedSize(size).Padded()),
 * so a client may not ask for a larger piece than its CAR fills.
 */
function curioSizeRefusal(p: DealProposal, transfer: SimTransfer): string | null {
  const natural = paddedPieceSize(transfer.size)
  return p.PieceSize === natural ? null : `deal proposal piece size ${p.PieceSize} doesn't match padded piece size ${natural}`
}

/** Flips one bit in the middle: the smallest lie a verifier must still catch. */
function corrupt(bytes: Uint8Array): Uint8Array {
  const copy = new Uint8Array(bytes)
  if (copy.length > 0) copy[copy.length >> 1] ^= 0x01
  return copy
}
