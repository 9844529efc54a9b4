// The chain's and the storage market's data as both sides speak them: the adapters in server/network
// read and write these shapes, and the simulated chain in server/simulation serves them; neither
// side imports the other (test/shared/import-graph.test.ts).
import type { NetworkClock } from './epochs.ts'

/** How a provider takes a deal's data (Boost's transfer types). */
export type TransferType = 'http' | 'graphsync' | 'libp2p' | 'manual'
export const TRANSFER_TYPES: readonly TransferType[] = ['http', 'graphsync', 'libp2p', 'manual']

export interface ChainHead {
  epoch: number
  /** Unix seconds of the head's epoch. */
  timestamp: number
}

/** A market deal proposal, with Lotus's field names (the spec uses them too). */
export interface DealProposal {
  PieceCID: { '/': string }
  PieceSize: number
  VerifiedDeal: boolean
  Client: string
  Provider: string
  Label: string
  StartEpoch: number
  EndEpoch: number
  StoragePricePerEpoch: string
  ProviderCollateral: string
  ClientCollateral: string
}

/** The market actor's view of a deal; -1 means "not yet" (Lotus convention). */
export interface DealChainState {
  SectorStartEpoch: number
  LastUpdatedEpoch: number
  SlashEpoch: number
}

export interface MarketDeal {
  dealId: number
  proposal: DealProposal
  state: DealChainState
  /** Epoch of the PublishStorageDeals message; -1 when the node cannot tell. */
  publishedEpoch: number
}

export interface MinerInfo {
  /** The miner's ID address (f0…). */
  id: string
  owner: string
  worker: string
  peerId: string | null
  /** Where its libp2p peer listens, as multiaddr strings (StateMinerInfo's Multiaddrs, base64 bytes on the wire). */
  multiaddrs: string[]
  sectorSize: number
}

export interface EpochRange {
  from: number
  to: number
}

/**
 * What a provider accepts. The chain does not hold this; the simulated network
 * knows it, a Lotus node does not (its adapter answers null).
 */
export interface ProviderTerms {
  id: string
  online: boolean
  /** Attofil per GiB per epoch, decimal strings. */
  verifiedPrice: string
  unverifiedPrice: string
  acceptsVerified: boolean
  acceptsUnverified: boolean
  transferTypes: TransferType[]
  minPieceSize: number
  maxPieceSize: number
  minDuration: number
  maxDuration: number
  /** Start epoch must be at least head + this. */
  minStartLead: number
  /** Bytes it still accepts. */
  freeCapacity: number
  /** Epoch ranges in which it takes no new deals. */
  busy: EpochRange[]
  /** Null: any client; otherwise only these client addresses (ID or robust). */
  allowedClients: string[] | null
}

/**
 * The chain as the deal service and the gateway read it, and the providers it
 * knows; one implementation per kind of node: the Lotus JSON-RPC adapter
 * (server/network/lotus) and the in-process simulated chain (server/simulation).
 */
export interface NetworkPort {
  readonly kind: 'simnet' | 'lotus'
  readonly clock: NetworkClock
  chainHead(): Promise<ChainHead>
  /** The f0 ID address behind any address, or null when the chain has never seen it. */
  lookupId(address: string): Promise<string | null>
  /** Null when the address is not a storage provider on chain. */
  minerInfo(address: string): Promise<MinerInfo | null>
  /**
   * The deal as the market actor holds it; null when it is not in its state: never published,
   * or removed (slashed, expired, or not activated by its start epoch). Null only on the node's own
   * "not found": any other failure (a busy node, a timeout) is thrown, as it says nothing of the deal.
   */
  getDeal(dealId: number): Promise<MarketDeal | null>
  /**
   * The id the next published deal will get (the market actor's NextID, read with StateReadState):
   * deal ids are sequential, so every deal on chain has an id below it.
   */
  nextDealId(): Promise<number>
  /** The network version at the head (StateNetworkVersion), e.g. 28; from 29 (FIP-0118) verified deals are refused. */
  networkVersion(): Promise<number>
  /**
   * The deal id the market gave `proposal` in the PublishStorageDeals message
   * `publishCid` (StateSearchMsg, then the message's params to find the
   * proposal in its batch), or null while the message is not on chain.
   * Throws a NetworkError (REJECTED_BY_CHAIN, with `exitCode` and `messageCid`) when the message failed or the proposal
   * was not valid. For providers that report the publish message but
   * ChainDealID 0 (Curio until sealing ends).
   */
  publishedDealId(publishCid: string, proposal: DealProposal): Promise<number | null>
  /** The client's DataCap in bytes (StateVerifiedClientStatus); null when it is not a verified client. */
  dataCap(address: string): Promise<bigint | null>
  /** The provider collateral a deal of this padded size must carry (StateDealProviderCollateralBounds), attoFIL. */
  collateralBounds(pieceSize: number, verified: boolean): Promise<{ min: bigint; max: bigint }>
  /** The address's storage market escrow (StateMarketBalance), attoFIL. */
  marketBalance(address: string): Promise<{ escrow: bigint; locked: bigint }>
  /** Storage providers the adapter knows how to offer deals to. */
  listProviders(): Promise<string[]>
  /** Null when the terms are not known (e.g. a plain Lotus node). */
  providerTerms(providerId: string): Promise<ProviderTerms | null>
  close(): Promise<void>
}
