// What the Onchain Cloud port says, apart from the verbs that say it: each verb's file and the
// client (which names them all again for its users) import these without importing each other.
import type { Hash } from 'viem'

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

/** Whether the account can pay for storing `dataSize` more bytes, and what it would take. */
export interface FocFunding {
  ready: boolean
  /** USDFC (18 decimals) to deposit into Filecoin Pay first. */
  depositNeeded: bigint
  /** Whether the warm storage service still needs the payer's operator approval. */
  needsApproval: boolean
  /** What the new bytes add to the payment rate, per epoch. */
  ratePerEpoch: bigint
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
  /** The latest closed proving periods in a row with no proof (up to a few): a provider that stopped proving. */
  missedPeriods: number
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

export type FocStoreEvent =
  | { kind: 'uploaded'; bytes: number }
  | { kind: 'stored'; providerId: number }
  | { kind: 'adding'; providerId: number; txHash: Hash }
  | { kind: 'added'; providerId: number; dataSetId: bigint }
  | { kind: 'copy-failed'; providerId: number; reason: string }
