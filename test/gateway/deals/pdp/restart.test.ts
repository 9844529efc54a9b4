import { afterEach, describe, expect, it } from 'vitest'
import { uploadPieceCid } from '../../../../server/gateway/deals/pdp/upload.ts'
import { ADD_STEPS } from './fake-foc.ts'
import { pdpHarness, type PdpHarness } from './harness.ts'

/**
 * A gateway stopped (killed, or stopping) while its PDP copies were being
 * added: what the next start finds on chain is adopted, the rest made again,
 * and nothing is paid for twice. The kill is the old route's upload left
 * hanging at one step of the add (fake-foc.ts ADD_STEPS), its rows as it
 * wrote them, while a new route (the next process) opens over the same
 * store and chain. The real process killed at each step, against the
 * simulated Onchain Cloud, is test/e2e/pdp-kill.test.ts.
 */
describe('PDP copies after a restart', () => {
  let h: PdpHarness
  afterEach(() => h?.close())

  /** A gateway whose upload of one group to pdp:1 and pdp:2 hangs at `step` there; no idle timeout cuts it short. */
  async function killedAt(step: (typeof ADD_STEPS)[number]): Promise<PdpHarness> {
    h = await pdpHarness({ uploadIdleMs: 3_600_000 })
    h.foc.plans.set(1, step)
    h.foc.plans.set(2, step)
    h.group()
    await h.pass()
    // Until the old route's rows and the chain show the step reached (the upload then hangs there for good).
    const reached = async () => {
      const rows = await h.rows(1)
      const onChain = step === 'hang-before-add' ? 0 : 2
      const hashes = step === 'hang-after-add' ? 2 : 0
      return (
        rows.filter((d) => d.state === 'proposed').length === 2 &&
        h.foc.pieces.length === onChain &&
        rows.filter((d) => d.addTxHash).length === hashes
      )
    }
    for (let i = 0; i < 500 && !(await reached()); i++) await new Promise((r) => setTimeout(r, 10))
    h.foc.plans.clear()
    return h.reopen()
  }

  /** Per provider: [live pieces of the group's piece on chain, copies the gateway counts there]. */
  async function chainAgainstRows(groupId = 1): Promise<Record<string, [number, number]>> {
    const pieceCid = uploadPieceCid(h.groups[groupId - 1])
    const rows = (await h.rows(groupId)).filter((d) => d.state === 'published' || d.state === 'active')
    const live = await h.foc.pieceCopies({ pieceCid })
    return Object.fromEntries(
      h.foc.providers.map((id) => [
        `pdp:${id}`,
        [live.filter((c) => c.providerId === id).length, rows.filter((d) => d.provider === `pdp:${id}`).length],
      ]),
    )
  }

  it('killed once the providers hold the piece, before any add: waits for an add that may still land, then uploads again to the same providers', async () => {
    const again = await killedAt('hang-before-add')
    expect((await again.rows(1)).map((d) => [d.provider, d.state, d.addTxHash])).toEqual([
      ['pdp:1', 'proposed', undefined],
      ['pdp:2', 'proposed', undefined],
    ])
    await again.pass()
    // Nothing on chain yet, and an add sent just before the kill could still land: not uploaded again yet.
    expect(h.foc.stores).toHaveLength(1)
    again.advance(21)
    await again.pass()
    await again.settled()
    expect((await again.rows(1)).map((d) => [d.provider, d.state, d.failure?.code])).toEqual([
      ['pdp:1', 'failed', 'STOPPED_BEFORE_ADD'],
      ['pdp:2', 'failed', 'STOPPED_BEFORE_ADD'],
      ['pdp:1', 'published', undefined],
      ['pdp:2', 'published', undefined],
    ])
    // The interruption was the gateway's: neither provider is passed over.
    expect(h.foc.stores.at(-1)).toEqual({ copies: 2, exclude: [] })
    expect(await chainAgainstRows()).toEqual({ 'pdp:1': [1, 1], 'pdp:2': [1, 1], 'pdp:3': [0, 0] })
    // An add sent just before the kill lands even later, beside the copy made again: found, and removed.
    h.foc.addUnheard(1, uploadPieceCid(h.groups[0]))
    again.advance(10)
    await again.pass()
    expect((await again.rows(1)).at(-1)).toMatchObject({ provider: 'pdp:1', state: 'failed', failure: { code: 'EXTRA_COPY' } })
    expect(await chainAgainstRows()).toEqual({ 'pdp:1': [1, 1], 'pdp:2': [1, 1], 'pdp:3': [0, 0] })
  })

  it.each(['hang-in-flight', 'hang-after-add'] as const)(
    'killed at %s: adopts both copies from the chain at the next start, uploads nothing again',
    async (step) => {
      const again = await killedAt(step)
      await again.pass()
      await again.settled()
      expect((await again.rows(1)).map((d) => [d.provider, d.state, d.pieceId])).toEqual([
        ['pdp:1', 'published', 0],
        ['pdp:2', 'published', 0],
      ])
      expect(h.foc.stores).toHaveLength(1)
      expect(await chainAgainstRows()).toEqual({ 'pdp:1': [1, 1], 'pdp:2': [1, 1], 'pdp:3': [0, 0] })
    },
  )

  it('fails a copy whose add transaction reverted, and one still out of a block after an hour, and makes them again elsewhere', async () => {
    h = await pdpHarness()
    h.foc.plans.set(1, 'hang-after-add')
    h.foc.plans.set(2, 'hang-after-add')
    h.group()
    await h.pass()
    await new Promise((r) => setTimeout(r, 20))
    await h.route.stop()
    const [first, second] = await h.rows(1)
    expect([first.state, second.state]).toEqual(['proposed', 'proposed'])
    // Neither add is on chain: one reverted, one not in a block yet.
    h.foc.adds.get(first.addTxHash as `0x${string}`)!.outcome = 'reverted'
    h.foc.adds.get(second.addTxHash as `0x${string}`)!.outcome = 'pending'
    for (const piece of h.foc.pieces) piece.state = 'gone'
    h.foc.plans.clear()
    const again = await h.reopen()
    await again.pass()
    await again.settled()
    expect((await again.rows(1)).slice(0, 2).map((d) => [d.provider, d.state])).toEqual([
      ['pdp:1', 'failed'],
      ['pdp:2', 'proposed'],
    ])
    again.advance(121)
    await again.pass()
    await again.settled()
    expect((await again.rows(1)).filter((d) => d.failure?.code === 'INTERRUPTED').map((d) => d.provider)).toEqual(['pdp:1', 'pdp:2'])
    // Its own add failed: pdp:1 is not asked again for a while; the copy made meanwhile went elsewhere.
    expect(h.foc.stores[1]).toEqual({ copies: 1, exclude: [1, 2] })
    expect((await again.rows(1)).filter((d) => d.state === 'published').map((d) => d.provider)).toContain('pdp:3')
  })

  it('adopts pieces that rows of an older gateway lost, and removes the one added twice to the same data set', async () => {
    h = await pdpHarness()
    const g = h.group()
    const pieceCid = uploadPieceCid(g)
    // What issue 39 found: adds that went through, their rows failed as INTERRUPTED without a piece, pdp:1 holding it twice.
    for (const provider of ['pdp:1', 'pdp:2']) {
      const d = await h.deals.create({ groupId: 1, route: 'pdp', provider, pieceCid, startEpoch: 1, endEpoch: 1, proposalEpoch: 1 })
      await h.deals.markFailed(d.id, { code: 'INTERRUPTED' })
    }
    h.foc.addUnheard(1, pieceCid)
    h.foc.addUnheard(2, pieceCid)
    h.foc.addUnheard(1, pieceCid)
    await h.pass()
    await h.settled()
    expect(h.foc.stores).toHaveLength(0)
    expect((await h.rows(1)).slice(2).map((d) => [d.provider, d.state, d.pieceId, d.failure?.code])).toEqual([
      ['pdp:1', 'published', 0, undefined],
      ['pdp:2', 'published', 0, undefined],
      ['pdp:1', 'failed', 1, 'EXTRA_COPY'],
    ])
    expect(h.foc.removals).toEqual([{ dataSetId: h.foc.dataSets.get(1), pieceId: 1n }])
    expect(await chainAgainstRows()).toEqual({ 'pdp:1': [1, 1], 'pdp:2': [1, 1], 'pdp:3': [0, 0] })
  })
  it('keeps a missed proof across a restart: shown at once after it, and the copy stops counting at the same epoch, not a period later', async () => {
    h = await pdpHarness()
    h.group()
    await h.pass()
    await h.settled()
    // Proved in period 0 of the data sets proving since 1 000 (periods of 240 epochs: 1 ends at 1 480, 2 at 1 720…).
    h.advance(240)
    h.foc.prove(1)
    h.foc.prove(2)
    await h.pass()
    // pdp:1 stops proving; pdp:2 goes on.
    const period = async (on: PdpHarness) => {
      on.advance(240)
      on.foc.prove(2)
      await on.pass()
    }
    for (let i = 0; i < 3; i++) await period(h)
    // 1 960: periods 1 and 2 missed; counted until period 3 ends without a proof.
    expect((await h.rows(1))[0]).toMatchObject({ state: 'active', missedProofEpoch: 1_480, stopsCountingEpoch: 1_960 })
    const again = await h.reopen()
    expect((await again.deals.view(1)).deals[0]).toMatchObject({ provider: 'pdp:1', missedProofEpoch: 1_480, stopsCountingEpoch: 1_960 })
    await period(again)
    expect((await again.rows(1))[0]).toMatchObject({
      state: 'ended',
      failure: { code: 'MISSED_PROOFS', detail: '3 proving periods in a row without a proof' },
    })
  })
})
