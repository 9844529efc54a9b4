// What the Onchain Cloud port says, apart from the verbs that say it: each verb's file and the
// client (which names them all again for its users) import these without importing each other.
import type { Hash } from 'viem'
import type { GaRates } from './cost.ts'

/** One copy of a piece on one PDP provider: the piece `pieceId` of data set `dataSetId`. */
export interface FocCopy {
  providerId: number
  dataSetId: bigint
  pieceId: bigint
  /** Where the provider serves the piece (`<serviceURL>/piece/<pieceCid>`). */
  retrievalUrl: string
  /** The epoch the piece was added on chain: a proof after it covers the piece. */
  addedEpoch: number
}

export interface FocStored {
  pieceCid: string
  size: number
  copies: FocCopy[]
  /** Providers tried that hold no copy, and why. */
  failures: { providerId: number; reason: string }[]
}

/**
 * Whether the account can pay for the copies about to be made, by GA's charges (cost.ts), and what
 * it would take.
 */
export interface FocFunding {
  ready: boolean
  /** USDFC (18 decimals) to deposit into Filecoin Pay first. */
  depositNeeded: bigint
  /** Whether the warm storage service still needs the payer's operator approval. */
  needsApproval: boolean
  /** What the new copies add to the payment rate, per epoch. */
  ratePerEpoch: bigint
  /** USDFC the copies need available in Filecoin Pay (reserves, fees, 30 days of lockup, a runway margin). */
  required?: bigint
  /** Data sets the copies would create (the rest add to ours). */
  newDataSets?: number
  /** The storage prices the estimate was worked out with, as the warm storage service's view published them. */
  rates?: GaRates
}

/** What `funding` is asked about: the copies the next `store` makes. */
export interface FocFundingRequest {
  /** How many copies (default 1). */
  copies?: number
  /** Providers that will not be asked (as `store`'s excludeProviderIds). */
  excludeProviderIds?: number[]
  /** The data set metadata `store` is given. */
  metadata?: Record<string, string>
}

/** One of the payer's data sets, as the GA view (13 fields) and PDPVerifier 3.4.0 have it. */
export interface FocDataSet {
  dataSetId: bigint
  providerId: number
  clientDataSetId: bigint
  pdpRailId: bigint
  /** Non-zero once the service was terminated: the rail's last paid epoch. */
  pdpEndEpoch: bigint
  payer: `0x${string}`
  serviceProvider: `0x${string}`
  /** Operation fees owed to the provider, paid at its next proving period (FWSS 1.3.1 pendingOneTimePayments). */
  pendingFees: bigint
  /** What is left of the data set's lifecycle reserve (FWSS 1.3.1 lifecycleReserveBalance). */
  lifecycleReserve: bigint
  live: boolean
  /** Whether the warm storage service is its listener (not another service's data set). */
  managed: boolean
  leafCount: bigint
  activePieceCount: bigint
  metadata: Record<string, string>
}

/** The payer's standing in Filecoin Pay (synapse-core getAccountSummary). */
export interface FocAccount {
  walletUsdfc: bigint
  walletFil: bigint
  funds: bigint
  availableFunds: bigint
  lockupRatePerEpoch: bigint
  /** Epochs until the funds no longer cover the lockup rate (the SDK's runway). */
  runwayEpochs: bigint
  epoch: bigint
}

/** Where a copy stands on chain: the data set's proving, as PDPVerifier keeps it. */
export interface FocCopyProof {
  dataSetLive: boolean
  pieceLive: boolean
  /** Whether a proof covering the piece has passed (in one of the latest proving periods since it was added). */
  proved: boolean
  /**
   * The latest closed proving periods in a row with no proof (up to a few): a provider that stopped proving.
   * None once the current period is proven: it proves again.
   */
  missedPeriods: number
  /**
   * The deadline (the last epoch its proof was accepted in) of the first of
   * those missed periods, from the data set's proving schedule; null when
   * none is missed.
   */
  firstMissedDeadline: number | null
  /** The epoch of the last accepted proof (or the data set's creation, before any). */
  lastProvenEpoch: number
  /** When the next challenge window opens; null when none is scheduled. */
  nextChallengeEpoch: number | null
  /**
   * For a copy not proved yet: the epoch the challenge window of the first
   * proof covering its piece opens, from the data set's proving schedule (a
   * piece is first challenged in the proving period after the one it was
   * added in; one proving period ahead while its provider has not started
   * proving the data set). Null once proved, or gone.
   */
  firstProofDueEpoch: number | null
  /** The warm storage service's proving terms (getPDPConfig). */
  maxProvingPeriod: number
  challengeWindow: number
}

/** What an add transaction did: the copy it made, or that it reverted or added something else, or not in a block yet. */
export type FocAddOutcome = { status: 'added'; copy: FocCopy } | { status: 'failed' } | { status: 'pending' }

export interface FocStoreOptions {
  copies: number
  /** Providers that must not get a copy (they hold one already, or failed it). */
  excludeProviderIds?: number[]
  /** Data set metadata: pieces with the same metadata share a data set per provider. */
  metadata?: Record<string, string>
  /** The piece's metadata (e.g. `ipfsRootCID`, the CAR's root, for providers that index it). */
  pieceMetadata?: Record<string, string>
  /** The piece CID v2 of `data` when the caller knows it: the SDK then does not hash the bytes again (the provider still checks). */
  pieceCid?: string
  signal?: AbortSignal
  onProgress?: (event: FocStoreEvent) => void
}

/**
 * The SDK's steps of one store, in its order: the bytes taken by the first
 * provider it picks (`uploaded`, `stored`), pulled from it by the others
 * (`pulled`), then on each an add request whose transaction the provider
 * sends (`adding`, once it answers) and sees land (`added`). The SDK sends
 * the add requests only once every provider holds the piece (`stored` or `pulled`).
 */
export type FocStoreEvent =
  | { kind: 'uploaded'; bytes: number }
  | { kind: 'stored'; providerId: number }
  | { kind: 'pulled'; providerId: number }
  | { kind: 'adding'; providerId: number; txHash: Hash }
  | { kind: 'added'; providerId: number; dataSetId: bigint }
  | { kind: 'copy-failed'; providerId: number; reason: string }
