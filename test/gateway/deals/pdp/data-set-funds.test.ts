import { afterEach, describe, expect, it } from 'vitest'
import { FocFundsError } from '../../../../server/network/foc/client.ts'
import { pdpHarness, type PdpHarness } from './harness.ts'

/**
 * A new data set the chain refused for want of funds (FWSS 1.3.1 Rails.sol InsufficientLockupFunds: its
 * lifecycle reserve and 30 days of its fee must be available first). The estimate cannot know the SDK will
 * open a data set on a provider it had none with, so the upload meets the rule; the client names the
 * shortfall (network/foc/store.ts, test/network/foc/data-set-funds.test.ts) and the route acts on it.
 */
describe('a PDP upload refused for the lockup of a new data set', () => {
  let h: PdpHarness
  afterEach(() => h?.close())

  const SHORT = 82_200_000_000_000_000n // 0.0822 USDFC: 0.124 needed, 0.0418 available (seen with a third provider)
  const refusedOnce = (harness: PdpHarness) => {
    const store = harness.foc.store.bind(harness.foc)
    let refused = false
    harness.foc.store = async (data, o) => {
      if (refused) return store(data, o)
      refused = true
      throw new FocFundsError(
        'a new data set was refused (warm storage service InsufficientLockupFunds): deposit at least 0.0822 USDFC more',
        {
          shortBy: SHORT,
        },
      )
    }
  }

  it('deposits the shortfall from the wallet with automatic deposits, and the next pass stores the copy', async () => {
    h = await pdpHarness({ autoDeposit: true })
    refusedOnce(h)
    h.group()
    await h.pass()
    await h.settled()
    // The rule's amount and a tenth more, in whole cents: 0.0822 → 0.09043 → 0.10 USDFC.
    expect(h.foc.deposits).toEqual([100_000_000_000_000_000n])
    expect(h.logs.some((l) => l.msg === 'deposited USDFC into Filecoin Pay for a new PDP data set')).toBe(true)
    h.advance(10)
    await h.pass()
    await h.settled()
    expect((await h.rows(1)).filter((d) => d.state === 'published' || d.state === 'active')).toHaveLength(2)
    expect(h.route.progress(1, await h.rows(1)).blocked).toBeUndefined()
  })

  it('says what to deposit, and deposits nothing, without automatic deposits', async () => {
    h = await pdpHarness({ autoDeposit: false })
    refusedOnce(h)
    h.group()
    await h.pass()
    await h.settled()
    expect(h.foc.deposits).toEqual([])
    expect(h.route.progress(1, await h.rows(1)).blocked).toMatchObject({
      code: 'WAITING_FOR_FUNDS',
      words: expect.stringContaining('InsufficientLockupFunds): deposit at least 0.0822 USDFC more'),
    })
  })
})
