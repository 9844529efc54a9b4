import type { OnChainDealState } from '../../../network/deal-status.ts'
import type { DealProposal } from '../../../network/types.ts'

/**
 * How the gateway reaches storage providers and the chain they publish on.
 * One implementation (boost-provider-port.ts): Lotus JSON-RPC for the chain,
 * the Boost protocols over libp2p and HTTP for providers, on the simulated
 * network and on a real one alike.
 */
export interface StorageProviderPort {
  /** Wall-clock seconds per epoch of the chain the providers publish on: 30, less on a sped-up simulated network. */
  readonly epochSeconds: number
  chainHead(): Promise<number>
  /** The chain's network version (StateNetworkVersion): from 29 (FIP-0118) there are no verified deals. */
  networkVersion(): Promise<number>
  /** The ID address (f0…) the chain knows an address by, as deals on chain name their client; null when it has none. */
  idAddress(address: string): Promise<string | null>
  /** The provider's storage ask (what Boost's `/fil/storage/ask/1.1.0` answers); null when it has none. */
  ask(provider: string, options?: PortOptions): Promise<StorageAsk | null>
  /** Sends a proposal; the provider then fetches the CAR from `transfer.url` with `transfer.headers`. */
  propose(proposal: DealProposal, transfer: CarTransfer, options?: PortOptions): Promise<ProposalAnswer>
  /** Where a proposal accepted earlier stands at the provider. */
  proposalState(provider: string, proposalId: string, options?: PortOptions): Promise<ProposalState>
  /** The provider collateral to propose for a piece: the market's minimum, with a margin, as Boost's client picks it. */
  providerCollateral(pieceSize: number, verified: boolean): Promise<string>
  /** What the client address may spend: DataCap (null: not a verified client) and market escrow, from the chain. */
  clientFunds(client: string): Promise<ClientFunds>
  /** The market actor's NextID: every deal id below it is published (or was, and is gone). */
  nextDealId(): Promise<number>
  /**
   * The deal's state and proposal on chain, or null when the node answers that its market holds no such
   * deal (not yet, or no longer). Throws when the chain could not be asked (busy, rate-limited, slow, a 5xx):
   * that says nothing about the deal.
   */
  dealOnChain(dealId: number, head: number): Promise<(OnChainDealState & { proposal: DealProposal }) | null>
  /** Whether the provider serves HTTP retrieval (its transports name an http endpoint): only then can we check and offload. */
  servesHttpRetrieval(provider: string, options?: PortOptions): Promise<boolean>
  /**
   * One block of a stored piece, unverified (the caller checks it against its CID): the retrieval
   * check, and reads of offloaded files block by block. Throws when the provider cannot serve it.
   */
  retrieveBlock(provider: string, pieceCid: string, blockCid: string, options?: PortOptions): Promise<Uint8Array>
  /** The whole piece's data, cut at `carSize` (a provider serves it padded with zeros), to reload an offloaded group for repair. */
  retrievePiece(provider: string, pieceCid: string, carSize: number, options?: PortOptions): AsyncIterable<Uint8Array>
}

export interface ClientFunds {
  dataCap: bigint | null
  escrow: bigint
  locked: bigint
}

export interface PortOptions {
  signal?: AbortSignal
}

export interface StorageAsk {
  /** Attofil per GiB per epoch, for unverified and verified deals. */
  price: bigint
  verifiedPrice: bigint
  /** Padded piece sizes the provider takes; a smaller piece is padded up to `minPieceSize` by the client. */
  minPieceSize: number
  /** The ask's MaxPieceSize, or its sector size when smaller (a piece is sealed into one sector). */
  maxPieceSize: number
}

export interface CarTransfer {
  /** The CAR's root: the deal's data root. */
  dataRoot: string
  url: string
  headers: Record<string, string>
  /** Bytes the provider downloads: the CAR, then zeros up to the proposal's unpadded piece size. */
  size: number
}

export type ProposalAnswer = ({ accepted: true; proposalId: string } | { accepted: false; reason: string }) & {
  /** What was sent, for the audit trail: the signed proposal's CBOR and its CID. */
  signedProposal?: Uint8Array
  proposalCid?: string
}

export type ProposalState =
  | { state: 'transferring' }
  | { state: 'published'; dealId: number }
  | { state: 'failed'; reason: string }
  /** The provider says it has no such deal (Boost: "no storage deal found"); one answer alone proves nothing. */
  | { state: 'unknown' }
  /** The provider answered without a status (a transient error on its side): ask again later. */
  | { state: 'no-answer'; reason: string }
