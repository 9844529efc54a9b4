import { maxUint256 } from 'viem'
import { contractSnapshot, type FocContext } from './context.ts'
import type { FocCopy, FocCopyProof } from './types.ts'

/**
 * How many of the latest proving periods a copy's proofs are looked up in:
 * the current one and three closed ones, as many as the gateway's rule for a
 * copy that stopped proving counts (deals/pdp/faults.ts).
 */
const RECENT_PERIODS = 4

/**
 * Where a copy stands on chain, read from PDPVerifier and the warm storage
 * service (FWSS and its view contract). The proof state (liveness, last proof,
 * proven periods) and the schedule it is read by all describe the head's
 * block: read apart, a proof landing between the reads showed a proved copy
 * with the data set's pre-proof epoch.
 */
export async function copyProof(
  { client, chain }: Pick<FocContext, 'client' | 'chain'>,
  { dataSetId, pieceId, addedEpoch }: Pick<FocCopy, 'dataSetId' | 'pieceId' | 'addedEpoch'>,
): Promise<FocCopyProof> {
  const { pdp, fwss, fwssView } = chain.contracts
  const head = await client.getBlockNumber({ cacheTime: 0 })
  // Both snapshots read the head's block: the second (which periods were proven) depends on the first's schedule.
  const snapshot = contractSnapshot(client, { blockNumber: head })
  const schedule = await snapshot(
    [fwssView, 'getPDPConfig'],
    [fwss, 'getProvingPeriodForEpoch', [dataSetId, BigInt(addedEpoch)]],
    [fwss, 'getProvingPeriodForEpoch', [dataSetId, head]],
    [fwssView, 'provingActivationEpoch', [dataSetId]],
    [pdp, 'getNextChallengeEpoch', [dataSetId]],
  )
  const [config, addedPeriod, currentPeriod, activation = 0n, nextChallenge = 0n] = schedule as [
    readonly [bigint, bigint, bigint, bigint],
    bigint | undefined,
    bigint | undefined,
    bigint | undefined,
    bigint | undefined,
  ]
  // FWSS counts proofs per proving period (provenPeriods). A piece added in period k is first
  // challenged in period k + 1, once the provider's nextProvingPeriod takes it into the range;
  // one added before proving started, from period 0.
  const periods: bigint[] = []
  if (currentPeriod !== undefined && addedPeriod !== undefined && currentPeriod !== maxUint256) {
    const first = addedPeriod === maxUint256 ? 0n : addedPeriod + 1n
    for (let p = currentPeriod; p >= first && periods.length < RECENT_PERIODS; p--) periods.push(p)
  }
  const [dataSetLive = false, pieceLive = false, lastProven = 0n, ...proven] = (await snapshot(
    [pdp, 'dataSetLive', [dataSetId]],
    [pdp, 'pieceLive', [dataSetId, pieceId]],
    [pdp, 'getDataSetLastProvenEpoch', [dataSetId]],
    ...periods.map((p): [typeof fwssView, string, unknown[]] => [fwssView, 'provenPeriods', [dataSetId, p]]),
  )) as [boolean | undefined, boolean | undefined, bigint | undefined, ...(boolean | undefined)[]]
  const proved = dataSetLive && proven.some(Boolean)
  // Closed periods (all but the current one) without a proof, the latest first, in a row; none once the current
  // period is proven: its provider proves again.
  let missedPeriods = 0
  if (dataSetLive && !proven[0]) {
    for (const wasProven of proven.slice(1)) {
      if (wasProven) break
      missedPeriods++
    }
  }
  const live = dataSetLive && pieceLive
  const terms = { period: Number(config[0]), window: Number(config[1]) }
  // Period N of a data set whose proving started at A ends at its deadline A + (N + 1)·M (FWSS _calcPeriodDeadline).
  const firstMissed = missedPeriods > 0 && currentPeriod !== undefined ? Number(currentPeriod) - missedPeriods : undefined
  return {
    dataSetLive,
    pieceLive: live,
    proved: proved && pieceLive,
    firstProofDueEpoch:
      live && !proved ? firstProofDue({ head: Number(head), addedEpoch, activation: Number(activation), ...terms }) : null,
    missedPeriods,
    firstMissedDeadline: firstMissed === undefined ? null : Number(activation) + (firstMissed + 1) * terms.period,
    lastProvenEpoch: Number(lastProven),
    nextChallengeEpoch: nextChallenge === 0n ? null : Number(nextChallenge),
    maxProvingPeriod: Number(config[0]),
    challengeWindow: Number(config[1]),
  }
}

/**
 * When the challenge window of a piece's first proof opens, from the data
 * set's proving schedule (filecoin-services v1.3.x FilecoinWarmStorageService.sol
 * _provingPeriodForEpoch and nextProvingPeriod): period N of a data set whose
 * proving started at epoch A is (A + N·M, A + (N+1)·M], its proof due in the
 * last `window` epochs before that deadline. A piece added in period k is
 * first challenged in period k + 1 (added by A, in period 0); before proving
 * starts (A = 0: the provider starts it once the first piece is in) the first
 * deadline is one period from now. A deadline already past without the proof
 * leaves the next period's window as the next chance.
 *
 * @example firstProofDue({ head: 1100, addedEpoch: 1050, activation: 1000, period: 2880, window: 60 }) // 6700: period 1's window
 */
export function firstProofDue(o: { head: number; addedEpoch: number; activation: number; period: number; window: number }): number {
  const { head, addedEpoch, activation, period, window } = o
  if (activation === 0) return head + period - window
  const addedPeriod = addedEpoch <= activation ? -1 : Math.floor((addedEpoch - activation - 1) / period)
  let deadline = activation + (addedPeriod + 2) * period
  if (deadline < head) deadline += Math.ceil((head - deadline) / period) * period
  return deadline - window
}
