import { describe, expect, it } from 'vitest'
import { epochToTimestamp, networkClock, speedInWords, spedUpClock, timestampToEpoch, EPOCHS_PER_DAY } from '../../server/shared/epochs.ts'

describe('epochs', () => {
  it('uses the real genesis of mainnet and calibration', () => {
    // Mainnet genesis: 2020-08-24T22:00:00Z; calibration (2022 reset): 2022-11-01T18:13:00Z.
    expect(epochToTimestamp(networkClock('mainnet'), 0)).toBe(1598306400)
    expect(epochToTimestamp(networkClock('calibration'), 0)).toBe(1667326380)
  })

  it('converts epochs to unix seconds at 30 s per epoch', () => {
    // Mainnet epoch 4,000,000: 1598306400 + 4e6 * 30 = 1718306400 (2024-06-13T19:20:00Z).
    expect(epochToTimestamp(networkClock('mainnet'), 4_000_000)).toBe(1718306400)
    expect(EPOCHS_PER_DAY).toBe(24 * 60 * 2)
  })

  it('round-trips and floors timestamps inside an epoch', () => {
    const clock = networkClock('mainnet')
    expect(timestampToEpoch(clock, 1718306400)).toBe(4_000_000)
    expect(timestampToEpoch(clock, 1718306429)).toBe(4_000_000)
    expect(timestampToEpoch(clock, 1718306430)).toBe(4_000_001)
    expect(timestampToEpoch(clock, 1598306399)).toBe(-1)
  })

  it('gives the simulated network its own configurable genesis', () => {
    expect(epochToTimestamp(networkClock('simnet', 1_000_000), 2)).toBe(1_000_060)
    expect(networkClock('simnet').genesis).not.toBe(networkClock('mainnet').genesis)
  })

  it('runs a sped-up simulated network on one line through the wall clock', () => {
    const genesis = 1_704_067_200
    const anchor = 1_795_000_000 // 2026-11-18: the first start
    const realTime = networkClock('simnet', genesis)
    const fast = spedUpClock(genesis, 300, anchor)
    // At the anchor both clocks agree on the head; from then on 300 epochs pass per 30 s.
    expect(timestampToEpoch(fast, anchor)).toBe(timestampToEpoch(realTime, anchor))
    const head = timestampToEpoch(fast, anchor)
    expect(timestampToEpoch(fast, anchor + 30) - head).toBe(300)
    // A deal ending 540 days of chain time later ends 540/300 days of wall-clock time later.
    const end = head + 540 * EPOCHS_PER_DAY
    expect(epochToTimestamp(fast, end) - anchor).toBeCloseTo((540 * 86_400) / 300, -1)
    // Whole seconds hold 10 epochs at this speed: an epoch's timestamp is the second it starts in.
    for (const e of [head, head + 1, head + 12_345, end]) {
      const t = epochToTimestamp(fast, e)
      expect(timestampToEpoch(fast, t)).toBeLessThanOrEqual(e)
      expect(timestampToEpoch(fast, t + 2)).toBeGreaterThan(e)
    }
  })

  it('says the speed-up in words, and nothing in real time', () => {
    expect(speedInWords(spedUpClock(SIM, 300, SIM + 1e8))).toBe('1 minute ≈ 5 hours')
    expect(speedInWords(spedUpClock(SIM, 60, SIM + 1e8))).toBe('1 minute ≈ 1 hour')
    expect(speedInWords(spedUpClock(SIM, 10, SIM + 1e8))).toBe('1 minute ≈ 10 minutes')
    expect(speedInWords(spedUpClock(SIM, 5760, SIM + 1e8))).toBe('1 minute ≈ 4 days')
    expect(speedInWords(networkClock('simnet'))).toBeUndefined()
    expect(speedInWords(networkClock('mainnet'))).toBeUndefined()
  })
})

const SIM = 1_704_067_200
