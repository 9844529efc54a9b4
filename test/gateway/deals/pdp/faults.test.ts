import { describe, expect, it } from 'vitest'
import { MISSED_PERIODS_LIMIT, provingVerdict } from '../../../../server/gateway/deals/pdp/faults.ts'

/**
 * A proved copy's missed proofs, as the chain tells them (the client's copyProof): calibration's proving
 * period of 240 epochs, a data set proving since 1 000, so period N ends at 1 000 + (N + 1)·240.
 */
describe("a PDP copy's missed proofs", () => {
  const chain = (missedPeriods: number, firstMissedDeadline: number | null) => ({
    missedPeriods,
    firstMissedDeadline,
    maxProvingPeriod: 240,
  })

  it('is proving while no closed period is missed', () => {
    expect(provingVerdict(chain(0, null), 1_500)).toEqual({ kind: 'proving' })
  })

  it('is missing from the first period missed, and counts until two more periods end without a proof', () => {
    const missed = { missedProofEpoch: 1_480, stopsCountingEpoch: 1_960 }
    expect(MISSED_PERIODS_LIMIT).toBe(3)
    // Seen just after period 1's deadline, and through the end of period 3: the last epoch a proof is accepted in.
    expect(provingVerdict(chain(1, 1_480), 1_481)).toEqual({ kind: 'missing', missed })
    expect(provingVerdict(chain(2, 1_480), 1_960)).toEqual({ kind: 'missing', missed })
    expect(provingVerdict(chain(3, 1_480), 1_961)).toEqual({ kind: 'stopped', missed, periods: 3 })
  })

  it('gives the same end whenever it is read: a reader that comes late (after a restart) neither restarts nor extends the count', () => {
    const early = provingVerdict(chain(1, 1_480), 1_486)
    expect(provingVerdict(chain(2, 1_480), 1_900)).toEqual(early)
    // Back after the whole grace: stopped at once, not given another period.
    expect(provingVerdict(chain(3, 1_480), 2_300).kind).toBe('stopped')
  })

  it('counts afresh from a later miss after a proof came in between', () => {
    expect(provingVerdict(chain(1, 2_200), 2_210)).toEqual({
      kind: 'missing',
      missed: { missedProofEpoch: 2_200, stopsCountingEpoch: 2_680 },
    })
  })

  it("takes the chain's proving period: a day on mainnet", () => {
    const mainnet = { missedPeriods: 1, firstMissedDeadline: 3_880, maxProvingPeriod: 2_880 }
    expect(provingVerdict(mainnet, 3_900)).toEqual({ kind: 'missing', missed: { missedProofEpoch: 3_880, stopsCountingEpoch: 9_640 } })
  })
})
