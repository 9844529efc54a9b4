import { z } from 'zod'

/**
 * Why a copy of a group failed or stopped counting, one code each, on
 * either storage route. Stored apart from its detail (the provider's words,
 * what the chain showed); decisions read the code's retry class, never the
 * words, and the tab words each code itself.
 *
 * - `soon`: nothing held against the provider; it may be asked again on the next pass.
 * - `later`: the provider is not asked again for this group for a while (DEAL_RETRY_AFTER, chain time).
 * - `never`: the provider is never asked again for this group's piece: it may hold a deal for it that we do not know of.
 */
export const COPY_FAILURES = {
  /** The provider answered the proposal with a no (its words: BUSY, PRICE_TOO_LOW…). */
  PROVIDER_DECLINED: { retry: 'later', providerWords: true },
  /** The provider took the deal, then reported it failed (its words: a transfer or sealing error). */
  PROVIDER_FAILED: { retry: 'later', providerWords: true },
  /** The provider refused at the protocol level (a stream it closed, a piece it would not take). */
  PROVIDER_REFUSED: { retry: 'later' },
  /** The provider could not be reached. */
  PROVIDER_UNREACHABLE: { retry: 'later' },
  /** The provider spoke something other than the protocol. */
  PROVIDER_PROTOCOL_ERROR: { retry: 'later' },
  /** No answer to a proposal in time: the provider may have taken it. */
  PROPOSAL_TIMEOUT: { retry: 'never' },
  /** The proposal was sent and the stream ended without an answer: the provider may have taken it. */
  PROPOSAL_UNANSWERED: { retry: 'never' },
  /** The provider said several times over that it has no such deal. */
  PROPOSAL_LOST: { retry: 'later' },
  /** Not published by the deal's start epoch. */
  PROPOSAL_EXPIRED: { retry: 'later' },
  /** The provider named a deal the chain does not have by the start epoch. */
  NOT_ON_CHAIN: { retry: 'later' },
  /** The deal on chain is not the one signed (piece, size, provider or client). */
  CHAIN_DEAL_MISMATCH: { retry: 'later' },
  /** Published but not in a sector by its start epoch. */
  NOT_SEALED_IN_TIME: { retry: 'later' },
  /** The provider lost the sector: the market slashed the deal. */
  SLASHED: { retry: 'later' },
  /** The deal reached its end epoch: a renewal may go to the same provider. */
  EXPIRED: { retry: 'soon' },
  /** Under way when the gateway stopped; its answer is lost. */
  INTERRUPTED: { retry: 'later' },
  /**
   * A PDP copy cut short by the gateway's own stop, which the chain shows was
   * never added (looked up by its piece CID): nothing held against the provider.
   */
  STOPPED_BEFORE_ADD: { retry: 'soon' },
  /**
   * A PDP piece of ours the gateway found live on chain beyond the copies it
   * keeps (an add that went through across a stop, the group made again
   * meanwhile): removed so that it is not paid for twice; nothing held against the provider.
   */
  EXTRA_COPY: { retry: 'soon' },
  /** The chain's node (the Onchain Cloud's RPC) did not answer during the upload: nothing held against the provider. */
  CHAIN_UNREACHABLE: { retry: 'soon' },
  /** A PDP upload that made no progress for the upload idle time. */
  UPLOAD_STALLED: { retry: 'later' },
  /** A PDP piece that got no proof in its first proving periods. */
  NEVER_PROVED: { retry: 'later' },
  /** A PDP provider that stopped proving the data set. */
  MISSED_PROOFS: { retry: 'later' },
  /** The piece was removed from its data set. */
  PIECE_REMOVED: { retry: 'later' },
  /** The data set holding the piece was terminated. */
  DATA_SET_TERMINATED: { retry: 'later' },
  /** A PDP copy that failed its retrieval checks (RETRIEVAL_FAILED_CHECKS in a row, or 5 of its last 20), ended (and its piece removed) once its replacement counts. */
  RETRIEVAL_FAILED: { retry: 'later' },
  /**
   * The group's files were all deleted (or replaced) RETIRE_AFTER_SECONDS ago: the copy is ended and its piece
   * removed so that it is no longer paid for; nothing held against the provider.
   */
  RETIRED: { retry: 'soon' },
  /** Recorded before failures had codes, in words no code matched. */
  UNKNOWN: { retry: 'later' },
} as const satisfies Record<string, { retry: 'soon' | 'later' | 'never'; providerWords?: true }>

export type CopyFailureCode = keyof typeof COPY_FAILURES
export type RetryClass = (typeof COPY_FAILURES)[CopyFailureCode]['retry']
export const COPY_FAILURE_CODES = Object.keys(COPY_FAILURES) as [CopyFailureCode, ...CopyFailureCode[]]
export const CopyFailureCodeSchema = z.enum(COPY_FAILURE_CODES)

/** A failure as the gateway records it: its code, and what the provider or the chain said. */
export interface CopyFailure {
  code: CopyFailureCode
  detail?: string
}

/** When a provider that failed this way may be asked again for the same group. */
export const retryClassOf = (code: CopyFailureCode): RetryClass => COPY_FAILURES[code].retry

/**
 * The failure in one line, as `reason` has always given it: the provider's
 * own words for what it said, else our code and what we saw
 * (`CHAIN_DEAL_MISMATCH: deal 12 on chain has piece …`).
 */
export function failureText(f: CopyFailure): string {
  if (!f.detail) return f.code
  return 'providerWords' in COPY_FAILURES[f.code] ? f.detail : `${f.code}: ${f.detail}`
}
