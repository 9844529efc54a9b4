import { afterEach, describe, expect, it } from 'vitest'
import { NetworkError } from '../../../../server/network/errors.ts'
import { FocDeploymentError } from '../../../../server/network/foc/client.ts'
import { pdpHarness, type PdpHarness } from './harness.ts'

/**
 * What the Onchain Cloud itself answers the PDP route with (pdp/chain-problems.ts): a contract's
 * revert is the contract's answer, named in the group's reason and said once in the log, not a
 * warning every pass nor "looking for storage providers"; it clears once a pass goes through (issue 44).
 */
describe("the PDP route and the Onchain Cloud's own refusals", () => {
  let h: PdpHarness
  afterEach(() => h?.close())

  /** What the client throws for a call the old view reverts, as focNetworkError reads it (test/network/foc/errors.test.ts). */
  const viewRefused = () =>
    new NetworkError('REJECTED_BY_CHAIN', "the warm storage service's view (0x5373) refused getPriceList(): no reason given", {
      revert: { contract: "the warm storage service's view (0x5373)", functionName: 'getPriceList', error: 'no reason given' },
    })

  it("names a contract's revert as the group's reason, once in the log, and clears it when the contract answers", async () => {
    h = await pdpHarness()
    h.group()
    const funding = h.foc.funding.bind(h.foc)
    let refusing = true
    h.foc.funding = async (bytes, request) => {
      if (refusing) throw viewRefused()
      return funding(bytes, request)
    }
    for (let pass = 0; pass < 5; pass++) {
      await h.pass()
      h.advance(10)
    }
    expect(h.foc.stores).toEqual([])
    expect(h.route.progress(1, await h.rows(1)).blocked).toEqual({
      code: 'CONTRACT_REFUSED',
      words: "the Onchain Cloud refused the gateway: the warm storage service's view (0x5373) refused getPriceList(): no reason given",
    })
    expect(h.logs.filter((l) => l.level >= 40).map((l) => l.msg)).toEqual([
      "PDP copies wait: the Onchain Cloud refused the gateway: the warm storage service's view (0x5373) refused getPriceList(): no reason given",
    ])

    refusing = false
    await h.pass()
    await h.settled()
    expect(h.foc.stores).toHaveLength(1)
    expect(h.route.progress(1, await h.rows(1)).blocked).toBeUndefined()
    expect(h.logs.filter((l) => l.msg === 'the Onchain Cloud answers the gateway again')).toHaveLength(1)
  })

  it('says so when the warm storage service was migrated to contracts the client cannot use', async () => {
    h = await pdpHarness()
    h.group()
    h.foc.funding = async () => {
      throw new FocDeploymentError(
        'NOT_GA',
        "the warm storage service's view at 0x5373, where FWSS points, has no getPriceList(): a view from before GA (1.3)",
      )
    }
    await h.pass()
    expect(h.route.progress(1, await h.rows(1)).blocked).toMatchObject({
      code: 'CONTRACT_REFUSED',
      words: expect.stringMatching(/^the Onchain Cloud's contracts cannot be used: .*has no getPriceList\(\)/),
    })
  })

  it('lets any other failure through to the engine, which says it and goes on', async () => {
    h = await pdpHarness()
    h.group()
    h.foc.funding = async () => {
      throw new Error('disk on fire')
    }
    await expect(h.pass()).rejects.toThrow('disk on fire')
    expect(h.route.progress(1, await h.rows(1)).blocked?.code).not.toBe('CONTRACT_REFUSED')
  })
})
