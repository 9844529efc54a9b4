import { describe, expect, it } from 'vitest'
import type { FocClient } from '../../../server/network/foc/client.ts'
import type { DealStack } from './harness.ts'
import { dealStackPerTest, bytes, details, groupIdOf, groupRow, pieceKey } from './deleted-files.ts'

/**
 * Delete means delete, on both routes at once: PDP copies on the simulated
 * Onchain Cloud (its chain on the wall clock) and a deal-market deal. A
 * deleted file's group, once RETIRE_AFTER_SECONDS (an hour of the test's
 * clock) have passed, has its PDP copies ended and their pieces scheduled
 * for removal, each removal paid once, also across a restart that came
 * before one of them went through; its market deal is not replaced when its
 * provider loses the data, and the group is not reloaded. A file restored
 * within the grace period costs nothing.
 */
const stacks = dealStackPerTest()

/** One pass of the engine; the test's clock then moves half an hour. */
const pass = (s: DealStack) => s.runUntil(() => false, { max: 1 })

describe('retiring groups of deleted files on both routes', () => {
  it('PDP pieces removed once (a restart before one went through pays nothing twice), the market deal never replaced, the group never reloaded; a restore within the grace period costs nothing', async () => {
    /** Removals asked of providers, by piece; the first one fails, as if the process went away before it went through. */
    const asked: string[] = []
    const removed: string[] = []
    const counting = (c: FocClient): FocClient => ({
      ...c,
      async removeCopy(copy) {
        asked.push(pieceKey(copy))
        if (asked.length === 1) throw new Error('the gateway stopped before this removal went through')
        const hash = await c.removeCopy(copy)
        removed.push(pieceKey(copy))
        return hash
      },
    })
    const s = await stacks.start({
      seed: 'retire on both routes',
      copies: 1,
      retireAfterSeconds: 3600,
      retrievalCheckMs: 60_000,
      foc: { copies: 2, endorsed: 3, client: counting },
    })
    // Two files, each alone in its group.
    const restored = bytes(150_000, 2)
    expect((await s.put('/gone.bin', bytes(150_000, 1))).status).toBe(201)
    await s.seal()
    expect((await s.put('/restored.bin', restored)).status).toBe(201)
    await s.seal()
    const gone = await groupIdOf(s, '/gone.bin')
    const back = await groupIdOf(s, '/restored.bin')
    expect(gone).not.toBe(back)
    const offloaded = async () =>
      (await details(s, '/gone.bin')).state === 'offloaded' && (await details(s, '/restored.bin')).state === 'offloaded'
    expect(await s.runUntil(offloaded, { max: 900, pauseMs: 100, epochsPerTick: 10 })).toBe(true)
    const before = { gone: await s.gateway.dealStore.ofGroup(gone), back: await s.gateway.dealStore.ofGroup(back) }
    const pdpOf = (rows: typeof before.gone) => rows.filter((d) => d.route === 'pdp' && d.state === 'active')
    expect(pdpOf(before.gone)).toHaveLength(2)
    expect(pdpOf(before.back)).toHaveLength(2)

    expect((await s.remove('/gone.bin')).status).toBe(204)
    expect((await s.remove('/restored.bin')).status).toBe(204)
    await pass(s)
    expect((await groupRow(s, back)).deadSinceMs).toBeDefined()
    // Restored from the trash within the hour: the same bytes, the same group.
    expect((await s.put('/restored.bin', restored)).status).toBe(201)
    expect(await groupIdOf(s, '/restored.bin')).toBe(back)
    await pass(s)
    await pass(s)
    expect((await groupRow(s, gone)).retiredMs).toBeDefined()

    // Its PDP copies ended as RETIRED; one removal went through, the other failed. The gateway restarts (what it
    // kept in memory is lost, as in a kill) and removes the other once, never the first again.
    const ended = (await s.gateway.dealStore.ofGroup(gone)).filter((d) => d.route === 'pdp')
    expect(ended.map((d) => [d.state, d.failure?.code])).toEqual([
      ['ended', 'RETIRED'],
      ['ended', 'RETIRED'],
    ])
    const pieces = ended.map(pieceKey).sort()
    expect(removed).toHaveLength(1)
    await s.restartGateway()
    for (let i = 0; i < 4; i++) await pass(s)
    await s.restartGateway()
    for (let i = 0; i < 4; i++) await pass(s)
    expect([...removed].sort()).toEqual(pieces)
    for (const d of ended)
      expect(['scheduled', 'gone']).toContain(
        await s.focClient!.removalState({ dataSetId: BigInt(d.dataSetId!), pieceId: BigInt(d.pieceId!) }),
      )

    // The market deal's provider loses the data: no new deal, no reload, no new PDP copy.
    const market = before.gone.find((d) => d.route === 'market' && d.state === 'active')!
    s.sim.setFault(market.provider, 'lose')
    const states = new Set<string>()
    for (let i = 0; i < 10; i++) {
      await pass(s)
      states.add((await groupRow(s, gone)).state)
    }
    expect([...states]).toEqual(['offloaded'])
    const after = await s.gateway.dealStore.ofGroup(gone)
    expect(after.map((d) => d.id)).toEqual(before.gone.map((d) => d.id))
    expect(after.find((d) => d.id === market.id)!.state).toBe('active')

    // The restored file's group: never retired, nothing removed, nothing bought.
    const row = await groupRow(s, back)
    expect([row.deadSinceMs, row.retiredMs]).toEqual([undefined, undefined])
    expect((await s.gateway.dealStore.ofGroup(back)).map((d) => [d.id, d.state])).toEqual(before.back.map((d) => [d.id, d.state]))
    for (const d of pdpOf(before.back)) expect(asked).not.toContain(pieceKey(d))
  }, 300_000)

  it('ends a data set once the retired group held our last piece in it: an empty data set would go on paying its fee', async () => {
    const s = await stacks.start({
      seed: 'retire the last piece',
      copies: 0,
      withoutService: true,
      retireAfterSeconds: 3600,
      foc: { copies: 2 },
    })
    expect((await s.put('/only.bin', bytes(150_000, 3))).status).toBe(201)
    await s.seal()
    const only = await groupIdOf(s, '/only.bin')
    expect(
      await s.runUntil(async () => (await details(s, '/only.bin')).state === 'offloaded', { max: 900, pauseMs: 100, epochsPerTick: 10 }),
    ).toBe(true)
    const copies = (await s.gateway.dealStore.ofGroup(only)).filter((d) => d.route === 'pdp' && d.state === 'active')
    expect(copies).toHaveLength(2)
    const ours = async () => (await s.focClient!.clientDataSets()).filter((d) => copies.some((c) => BigInt(c.dataSetId!) === d.dataSetId))
    expect((await ours()).map((d) => d.pdpEndEpoch)).toEqual([0n, 0n])

    expect((await s.remove('/only.bin')).status).toBe(204)
    for (let i = 0; i < 4; i++) await pass(s)
    expect((await groupRow(s, only)).retiredMs).toBeDefined()
    // Each piece scheduled for removal, and each data set, empty of ours, ended by the payer (FWSS terminateService).
    for (const d of copies)
      expect(['scheduled', 'gone']).toContain(
        await s.focClient!.removalState({ dataSetId: BigInt(d.dataSetId!), pieceId: BigInt(d.pieceId!) }),
      )
    const ended = await ours()
    expect(ended).toHaveLength(2)
    for (const d of ended) expect(d.pdpEndEpoch).toBeGreaterThan(0n)
  }, 300_000)
})
