import { maxUint256 } from 'viem'
import { contractReader, type FocContext } from './context.ts'
import type { FocCopy, FocCopyProof } from './types.ts'

/** How many of the latest proving periods a copy's proofs are looked up in. */
const RECENT_PERIODS = 4

/** Where a copy stands on chain, read from PDPVerifier and the warm storage service (FWSS and its view contract). */
export async function copyProof(
  { client, chain }: Pick<FocContext, 'client' | 'chain'>,
  { dataSetId, pieceId, addedEpoch }: Pick<FocCopy, 'dataSetId' | 'pieceId' | 'addedEpoch'>,
): Promise<FocCopyProof> {
  const { pdp, fwss, fwssView } = chain.contracts
  const read = contractReader(client)
  const head = await client.getBlockNumber({ cacheTime: 0 })
  const [dataSetLive, pieceLive, lastProven, nextChallenge, config, addedPeriod, currentPeriod, activation] = await Promise.all([
    read<boolean>(pdp, 'dataSetLive', [dataSetId]),
    read<boolean>(pdp, 'pieceLive', [dataSetId, pieceId]),
    read<bigint>(pdp, 'getDataSetLastProvenEpoch', [dataSetId]).catch(() => 0n),
    read<bigint>(pdp, 'getNextChallengeEpoch', [dataSetId]).catch(() => 0n),
    read<readonly [bigint, bigint, bigint, bigint]>(fwssView, 'getPDPConfig'),
    read<bigint>(fwss, 'getProvingPeriodForEpoch', [dataSetId, BigInt(addedEpoch)]),
    read<bigint>(fwss, 'getProvingPeriodForEpoch', [dataSetId, head]),
    read<bigint>(fwssView, 'provingActivationEpoch', [dataSetId]),
  ])
  // FWSS counts proofs per proving period (provenPeriods). A piece added in period k is first
  // challenged in period k + 1, once the provider's nextProvingPeriod takes it into the range;
  // one added before proving started, from period 0.
  let proved = false
  let missedPeriods = 0
  if (dataSetLive && currentPeriod !== maxUint256) {
    const first = addedPeriod === maxUint256 ? 0n : addedPeriod + 1n
    const periods: bigint[] = []
    for (let p = currentPeriod; p >= first && periods.length < RECENT_PERIODS; p--) periods.push(p)
    const proven = await Promise.all(periods.map((p) => read<boolean>(fwssView, 'provenPeriods', [dataSetId, p])))
    proved = proven.some(Boolean)
    // Closed periods (all but the current one) without a proof, the latest first, in a row.
    for (const wasProven of proven.slice(1)) {
      if (wasProven) break
      missedPeriods++
    }
  }
  const live = dataSetLive && pieceLive
  const schedule = { period: Number(config[0]), window: Number(config[1]) }
  return {
    dataSetLive,
    pieceLive: live,
    proved: proved && pieceLive,
    firstProofDueEpoch:
      live && !proved ? firstProofDue({ head: Number(head), addedEpoch, activation: Number(activation), ...schedule }) : null,
    missedPeriods,
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
