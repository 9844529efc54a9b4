import { describe, expect, it } from 'vitest'
import { ceilingInAttoFil, describePerTiBMonth, perGiBEpochAtMost, perTiBMonth } from '../../server/shared/deal-price.ts'

describe('deal prices per TiB-month', () => {
  it("reads Boost's default unverified ask (50 000 000 attoFIL per GiB per epoch) as 0.0044 FIL per TiB-month", () => {
    // 5e7 × 1024 GiB × 86 400 epochs (30 days) = 4.42368e15 attoFIL.
    expect(perTiBMonth(50_000_000n)).toBe(4_423_680_000_000_000n)
    expect(describePerTiBMonth(perTiBMonth(50_000_000n))).toBe('0.004423 FIL per TiB-month')
    expect(describePerTiBMonth(perTiBMonth(50_000_000n), 4)).toBe('0.004423 FIL per TiB-month (about 0.02 USD)')
  })

  it('turns a ceiling into the highest ask under it, in FIL or in USD at the ticker price', () => {
    const half = ceilingInAttoFil({ amount: '0.5', currency: 'FIL' })!
    expect(half).toBe(5n * 10n ** 17n)
    const most = perGiBEpochAtMost(half)
    expect(perTiBMonth(most)).toBeLessThanOrEqual(half)
    expect(perTiBMonth(most + 1n)).toBeGreaterThan(half)
    // 3 USD at 2.5 USD a FIL is 1.2 FIL.
    expect(ceilingInAttoFil({ amount: '3', currency: 'USD' }, 2.5)).toBe(12n * 10n ** 17n)
    // No fresh FIL price: no ceiling can be worked out.
    expect(ceilingInAttoFil({ amount: '3', currency: 'USD' }, 0)).toBeUndefined()
    expect(ceilingInAttoFil({ amount: '3', currency: 'USD' })).toBeUndefined()
  })
})
