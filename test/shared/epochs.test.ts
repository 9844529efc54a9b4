import { describe, expect, it } from 'vitest'
import { epochToTimestamp, networkClock, timestampToEpoch, EPOCHS_PER_DAY } from '../../server/shared/epochs.ts'

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
})
