/**
 * Issue 38, item 4: one "funded until" for the tab, the admin page and
 * `npm run wallet -- foc`: the wall-clock moment on the network's own clock,
 * and on a sped-up simulated network how many of its days that is.
 */
import { describe, expect, it } from 'vitest'
import { fundedUntil, fundedUntilAside, fundedUntilOfStatus } from '../../server/shared/funded-until.ts'
import { EPOCHS_PER_DAY, spedUpClock } from '../../server/shared/epochs.ts'

const NOW = 1_800_000_000
const headOf = (clock: { genesis: number; epochSeconds: number }) => Math.floor((NOW - clock.genesis) / clock.epochSeconds)

describe('funded until', () => {
  it('on the simulated network at 300×: 30 days paid are 2.4 wall-clock hours, and said as 30 days of its time', () => {
    const clock = spedUpClock(1704067200, 300, NOW - 3600)
    const f = fundedUntil(headOf(clock) + 30 * EPOCHS_PER_DAY, clock, NOW)
    expect((f.at - NOW) / 3600).toBeCloseTo(2.4, 1)
    expect(f.networkDays).toBeCloseTo(30, 1)
    expect(fundedUntilAside(f)).toBe('30 days in simulated network time')
  })

  it('on a real network: the date years ahead is the whole answer, with no aside', () => {
    const clock = { genesis: 1598306400, epochSeconds: 30 }
    const f = fundedUntil(headOf(clock) + 3 * 365 * EPOCHS_PER_DAY, clock, NOW)
    expect(new Date(f.at * 1000).getUTCFullYear()).toBe(new Date(NOW * 1000).getUTCFullYear() + 3)
    expect(fundedUntilAside(f)).toBeUndefined()
  })

  it("reads the gateway's status back to the same answer, so the admin page says what the tab says", () => {
    const clock = spedUpClock(1704067200, 300, NOW - 3600)
    const f = fundedUntil(headOf(clock) + 30 * EPOCHS_PER_DAY, clock, NOW)
    const back = fundedUntilOfStatus(new Date(f.at * 1000).toISOString(), f.networkDays, NOW)
    expect(fundedUntilAside(back)).toBe(fundedUntilAside(f))
    // An older gateway that does not send fundedDays: the wall-clock span, no aside made up.
    expect(fundedUntilAside(fundedUntilOfStatus(new Date(f.at * 1000).toISOString(), undefined, NOW))).toBeUndefined()
  })
})
