import type { PriceCeiling } from '../../../shared/deal-price.ts'
import type { MarketPlan } from './pricing.ts'
import type { DealServiceClient } from './service-client.ts'
import type { StorageProviderPort } from './provider-port.ts'

/** Whether new deals are verified (Fil+), and why not where verified ones were asked for. */
export interface DealKind {
  verified: boolean
  /** The chain's network version as last read; undefined before the first pass. */
  networkVersion?: number
  /** Set when verified deals were asked for (DEAL_VERIFIED) but the network no longer has them. */
  note?: string
}

/** The terms every new deal is proposed with. */
export interface DealTerms {
  /** Deal duration in epochs. */
  durationEpochs: number
  /** Attofil per GiB per epoch, decimal string; a deal's StoragePricePerEpoch is this × PieceSize / 2^30. */
  pricePerGiBEpoch: string
  /** Set: unverified deals pay the provider's own ask, at most this a TiB-month (DEAL_MAX_PRICE_PER_TIB_MONTH), not pricePerGiBEpoch. */
  maxPrice?: PriceCeiling
  /** Verified (Fil+) deals wanted; from network version 29 there are none, and deals go unverified. */
  verified: boolean
  /** A piece is padded with zeros to a provider's minimum piece size only up to this factor (Infinity: any). */
  maxPaddingFactor: number
  /** The deal must start this many epochs after the head (time to transfer and seal). */
  startOffsetEpochs: number
}

/** What pays for the deal market's copies: the client address's DataCap and escrow, and how far its deals are paid. */
export interface MarketFunding {
  /** Bytes of DataCap left; null when the address is not a verified client. */
  dataCap: bigint | null
  /** Storage market escrow, attoFIL, and how much of it deals lock. */
  escrow: bigint
  locked: bigint
  /** When the first of the stored data's active deals ends, in wall-clock milliseconds; undefined without any. */
  dealsUntilMs?: number
}

/** The deal market's standing: its funds as last read, why it proposes nothing (if so), and which deals it proposes. */
export interface MarketStanding {
  funds?: MarketFunding
  /** Why no deals are proposed at all right now (no DataCap, no escrow). */
  blocked?: string
  kind: DealKind
  /** What the next group gets from the market: copies, the most it pays a TiB-month, and why. */
  plan?: MarketPlan
}

/** The deal market route's dependencies and policy. */
export interface MarketRouteOptions {
  service: DealServiceClient
  providers: StorageProviderPort
  /** The client (wallet) address proposals are made from. */
  clientAddress: string
  /** The gateway's URL as providers reach it (the CAR is served under it). */
  publicUrl: () => string
  terms: DealTerms
  /** Fixed number of copies; unset: the tenant's onboarding policy decides (3 if it cannot be read yet). */
  copies?: number
  /** Longest a provider may take to answer a proposal (Boost's own client waits 60 s: storagemarket/lp2pimpl/net.go). */
  proposalTimeoutMs: number
  /** Chain time (30 s epochs) between deal status requests to a provider about one deal. */
  statusPollMs: number
  /** Deals ending within this many epochs no longer count: new ones are made (renewal), offloaded groups are reloaded for it. */
  renewBeforeEpochs: number
}
