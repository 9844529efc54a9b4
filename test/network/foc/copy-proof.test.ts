import { maxUint256 } from 'viem'
import { describe, expect, it } from 'vitest'
import { copyProof } from '../../../server/network/foc/copy-proof.ts'

/**
 * A chain whose head moves on by one block after every read: block 500 is the
 * head when the copy is looked up; in block 501 the provider's proof for the
 * current proving period (3) lands; periods 0 to 2 are proven as
 * `provenBefore` says (all by default), period 3 already when `provenNow`. Proving started at 100, in periods of
 * 100 epochs: period N ends at its deadline 100 + (N + 1)·100. Answers are given for the block a read
 * names, else for the newest one, as a node answers eth_call.
 */
function movingChain(provenBefore: (period: bigint) => boolean = (period) => period < 3n, provenNow = false) {
  let latest = 500n
  const blocksRead: (bigint | undefined)[] = []
  const answer = (block: bigint, functionName: string, args: readonly bigint[]): unknown => {
    const proofLanded = block >= 501n
    switch (functionName) {
      case 'getPDPConfig':
        return [100n, 20n, 0n, 0n]
      case 'getProvingPeriodForEpoch':
        // FWSS _provingPeriodForEpoch: none before proving started.
        return args[1] <= 100n ? maxUint256 : (args[1] - 101n) / 100n
      case 'provingActivationEpoch':
        return 100n
      case 'getNextChallengeEpoch':
        return 480n
      case 'dataSetLive':
      case 'pieceLive':
        return true
      case 'getDataSetLastProvenEpoch':
        return proofLanded ? 501n : 390n
      case 'provenPeriods':
        return args[1] < 3n ? provenBefore(args[1]) : proofLanded || provenNow
      default:
        throw new Error(`unexpected read ${functionName}`)
    }
  }
  const client = {
    getBlockNumber: async () => latest,
    multicall: async (p: { contracts: { functionName: string; args: readonly bigint[] }[]; blockNumber?: bigint }) => {
      blocksRead.push(p.blockNumber)
      const block = p.blockNumber ?? latest
      latest++
      return p.contracts.map((c) => ({ status: 'success', result: answer(block, c.functionName, c.args) }))
    },
  }
  const contract = (address: string) => ({ address, abi: [] })
  const chain = { contracts: { pdp: contract('0x01'), fwss: contract('0x02'), fwssView: contract('0x03') } }
  return { context: { client, chain } as never, blocksRead }
}

describe("a PDP copy's proofs read from chain", () => {
  it('all describe the block read as the head, though a proof lands between the reads', async () => {
    const chain = movingChain()
    const proof = await copyProof(chain.context, { dataSetId: 7n, pieceId: 1n, addedEpoch: 150 })
    // Block 500: periods 1 and 2 proven, the current one (3) not yet; the proof of block 501 is not seen.
    expect(proof).toMatchObject({ proved: true, lastProvenEpoch: 390, missedPeriods: 0 })
    expect(chain.blocksRead).toEqual([500n, 500n])
  })

  it('tells the closed periods missed in a row, and the deadline of the first of them', async () => {
    const chain = movingChain((period) => period < 1n)
    // Added before proving started: challenged from period 0 on, proven then.
    const proof = await copyProof(chain.context, { dataSetId: 7n, pieceId: 1n, addedEpoch: 50 })
    // Periods 1 (deadline 300) and 2 (deadline 400) passed without a proof.
    expect(proof).toMatchObject({ proved: true, missedPeriods: 2, firstMissedDeadline: 300 })
    const proving = await copyProof(movingChain().context, { dataSetId: 7n, pieceId: 1n, addedEpoch: 150 })
    expect(proving).toMatchObject({ missedPeriods: 0, firstMissedDeadline: null })
  })

  it('tells none missed once the current period is proven: the provider proves again', async () => {
    const back = movingChain((period) => period < 1n, true)
    const proof = await copyProof(back.context, { dataSetId: 7n, pieceId: 1n, addedEpoch: 50 })
    expect(proof).toMatchObject({ proved: true, missedPeriods: 0, firstMissedDeadline: null })
  })
})
