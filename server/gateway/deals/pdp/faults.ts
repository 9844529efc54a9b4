import type { FocCopyProof } from '../../../network/foc/client.ts'
import type { MissedProof } from '../types.ts'

/**
 * Proving periods missed in a row after which a copy stops counting: the
 * first one missed and the two after it, so that a provider (or this
 * gateway) just back from a stop has a whole period to prove again once the
 * miss is seen. On mainnet (a period a day) about two days after the first
 * missed deadline; the copy shows the miss from that deadline on.
 */
export const MISSED_PERIODS_LIMIT = 3

/** What a proved copy's proofs on chain say of it: proving, missing since a deadline (and until when it counts), or stopped. */
export type ProvingVerdict =
  { kind: 'proving' } | { kind: 'missing'; missed: MissedProof } | { kind: 'stopped'; missed: MissedProof; periods: number }

/**
 * Judges a proved copy from its proofs as the chain shows them: the first of
 * the proving periods it missed in a row (FWSS provenPeriods, read by the
 * client for the latest periods at one block) and the epoch it stops counting
 * after, both from the chain's proving schedule, so that every process that
 * reads them, before or after a restart, says the same. The chain, not the
 * gateway's memory, holds the count: a restart neither resets nor extends it.
 *
 * @example provingVerdict({ missedPeriods: 1, firstMissedDeadline: 1_480, maxProvingPeriod: 240 }, 1_500)
 *   // { kind: 'missing', missed: { missedProofEpoch: 1_480, stopsCountingEpoch: 1_960 } }
 */
export function provingVerdict(
  proof: Pick<FocCopyProof, 'missedPeriods' | 'firstMissedDeadline' | 'maxProvingPeriod'>,
  head: number,
): ProvingVerdict {
  const first = proof.firstMissedDeadline
  if (proof.missedPeriods === 0 || first === null) return { kind: 'proving' }
  const missed = { missedProofEpoch: first, stopsCountingEpoch: first + (MISSED_PERIODS_LIMIT - 1) * proof.maxProvingPeriod }
  // Past the last deadline of its grace with no proof since the first miss: that period is missed too.
  return head > missed.stopsCountingEpoch ? { kind: 'stopped', missed, periods: proof.missedPeriods } : { kind: 'missing', missed }
}
