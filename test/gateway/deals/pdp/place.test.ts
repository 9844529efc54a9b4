import { afterEach, describe, expect, it } from 'vitest'
import { FocFundsError } from '../../../../server/network/foc/client.ts'
import { pdpHarness, type PdpHarness } from './harness.ts'

/** Which groups the PDP route sends, in turn, and what a group it holds back says (pdp/place.ts, pdp/progress.ts). */
describe('PDP uploads taken in turn', () => {
  let h: PdpHarness
  afterEach(() => h?.close())

  /** How many uploads each group was sent in, by group id (the fake's stores in order, matched to the groups' piece sizes). */
  const tries = (before: number) => h.foc.uploads.slice(before).map((u) => u.size)

  it('a group whose uploads fail backs off and does not keep the slot: every other group gets its turn', async () => {
    h = await pdpHarness()
    // Every provider refuses, so no data set ever exists: one upload at a time.
    for (const p of h.foc.providers) h.foc.plans.set(p, { refuse: 'no space' })
    // Groups told apart by their CAR's size.
    for (const size of [200, 201, 202, 203]) h.group(size)
    for (let pass = 0; pass < 12; pass++) {
      await h.pass()
      await h.settled()
    }
    // Twelve passes in a row without the clock moving: each group was sent once, not the first one twelve times.
    expect(tries(0).sort()).toEqual([200, 201, 202, 203])
    // A group held back says when it is tried again, with its own code, not "on every pass".
    const said = h.route.progress(1, await h.rows(1))
    expect(said.underWay).toBe(false)
    expect(said.blocked).toMatchObject({ code: 'NO_PROVIDER', next: 'in about 2 minutes' })

    // The wait doubles: 4 epochs later each is tried again once, then not before 8 more.
    h.advance(4)
    const sent = h.foc.uploads.length
    for (let pass = 0; pass < 6; pass++) {
      await h.pass()
      await h.settled()
    }
    expect(tries(sent).sort()).toEqual([200, 201, 202, 203])
    h.advance(4)
    await h.pass()
    await h.settled()
    expect(h.foc.uploads.length).toBe(sent + 4)
  })

  it('a group waiting for the upload slot says so, with its own code', async () => {
    h = await pdpHarness({ uploadIdleMs: 600_000 })
    h.foc.plans.set(1, 'stall')
    h.group()
    h.group()
    await h.pass()
    expect(h.foc.stores).toHaveLength(1)
    const said = h.route.progress(2, [])
    expect(said.underWay).toBe(false)
    expect(said.blocked).toEqual({
      code: 'WAITING_FOR_UPLOAD_SLOT',
      words:
        'waiting for its turn to upload to PDP providers: 1 other group is uploading, one at a time until the account has data sets on 2 providers',
    })
    // The group being uploaded is under way.
    expect(h.route.progress(1, []).underWay).toBe(true)
  })

  it('says "no funds" once while uploads keep failing for it, as an attention code, and clears it when an upload stores a copy', async () => {
    h = await pdpHarness()
    h.group()
    // The account's estimate says it can pay; the upload itself finds the funds short (the SDK's own check).
    const store = h.foc.store.bind(h.foc)
    let short = true
    let attempts = 0
    h.foc.store = async (data, o) => {
      attempts++
      if (short) throw new FocFundsError('Filecoin Pay holds 0.01 USDFC; the upload needs 0.06 USDFC of lockup')
      return store(data, o)
    }
    for (let pass = 0; pass < 6; pass++) {
      await h.pass()
      await h.settled()
      h.advance(64)
    }
    // Tried again as the group's wait allows (the clock moves 64 epochs a pass), failing each time.
    expect(attempts).toBe(6)
    const errors = h.logs.filter((l) => l.level >= 50)
    expect(errors.map((l) => l.msg)).toEqual([
      'no PDP uploads: no funds: deposit USDFC: Filecoin Pay holds 0.01 USDFC; the upload needs 0.06 USDFC of lockup',
    ])
    expect(h.logs.filter((l) => l.msg === 'the account can pay for PDP uploads again')).toEqual([])
    expect(h.route.progress(1, await h.rows(1)).blocked).toMatchObject({ code: 'WAITING_FOR_FUNDS' })

    short = false
    h.advance(200)
    await h.pass()
    await h.settled()
    await h.pass()
    expect(h.route.progress(1, await h.rows(1)).blocked).toBeUndefined()
    expect(h.logs.filter((l) => l.msg === 'the account can pay for PDP uploads again')).toHaveLength(1)
  })
})
