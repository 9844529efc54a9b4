import { describe, expect, it } from 'vitest'
import type { FocClient } from '../../../server/network/foc/client.ts'
import { dealStackPerTest, bytes, details, groupIdsOf, groupRow, pieceKey } from './deleted-files.ts'

/**
 * Compaction on both routes at once: a deal-market deal and two PDP copies
 * on the simulated Onchain Cloud. A group 60 % deleted for the grace period
 * has its live files written into a new group, which gets its copies on both
 * routes; only then is the old group retired: its PDP pieces removed, each
 * once, its market deal left to its term. At every pass the live files keep
 * the three copies the policy asks for; a restart at each step buys and
 * removes nothing twice.
 */
const stacks = dealStackPerTest()

describe('compacting groups mostly of deleted files on both routes', () => {
  it('the new group has its copies on both routes before the old one is retired; PDP pieces removed once; nothing bought or removed twice across restarts', async () => {
    const removals: string[] = []
    const counting = (c: FocClient): FocClient => ({
      ...c,
      async removeCopy(copy) {
        removals.push(pieceKey(copy))
        return c.removeCopy(copy)
      },
    })
    const s = await stacks.start({
      seed: 'retire on both routes',
      copies: 1,
      retireAfterSeconds: 3600,
      retrievalCheckMs: 60_000,
      // Two providers: each group's two PDP copies are on both (a third one's data set creation is refused here).
      foc: { copies: 2, providers: 2, endorsed: 2, client: counting },
    })
    const files = new Map([0, 1, 2, 3, 4].map((i) => [`/f${i}.bin`, bytes(150_000, i)]))
    for (const [path, b] of files) expect((await s.put(path, b)).status).toBe(201)
    await s.seal()
    const run = { max: 900, pauseMs: 100, epochsPerTick: 10 }
    const offloaded = async (paths: string[]) => {
      for (const p of paths) if ((await details(s, p)).state !== 'offloaded') return false
      return true
    }
    expect(await s.runUntil(() => offloaded([...files.keys()]), run)).toBe(true)
    const [old] = await groupIdsOf(s, '/f0.bin')
    const oldCopies = await s.gateway.dealStore.ofGroup(old)
    const live = (rows: typeof oldCopies) => rows.filter((d) => d.state === 'active').map((d) => d.route)
    expect(live(oldCopies).sort()).toEqual(['market', 'pdp', 'pdp'])
    const policy = 3

    for (const p of ['/f1.bin', '/f2.bin', '/f3.bin']) expect((await s.remove(p)).status).toBe(204)
    const kept = ['/f0.bin', '/f4.bin']
    const pass = async () => {
      await s.runUntil(() => false, { ...run, max: 1 })
      for (const p of kept) expect((await details(s, p)).retrievableCopies).toBeGreaterThanOrEqual(policy)
    }
    await pass()
    expect((await groupRow(s, old)).sparseSinceMs).toBeDefined()
    await s.restartGateway()
    while ((await groupRow(s, old)).compactingMs === undefined) await pass()
    const newGroups = async () => (await s.gateway.content.groups()).filter((g) => g.id !== old)
    for (let i = 0; i < 100 && !(await newGroups()).some((g) => g.size >= 300_000); i++) await new Promise((r) => setTimeout(r, 50))
    const [written] = await newGroups()
    expect(written.size).toBe(300_000)
    await s.restartGateway()
    await s.seal()
    while ((await s.gateway.dealStore.ofGroup(written.id)).length === 0) await pass()
    await s.restartGateway()
    for (let i = 0; i < 900 && (await groupRow(s, old)).retiredMs === undefined; i++) await pass()
    expect((await groupRow(s, old)).retiredMs).toBeDefined()
    expect(live(await s.gateway.dealStore.ofGroup(written.id)).sort()).toEqual(['market', 'pdp', 'pdp'])
    await s.restartGateway()
    for (let i = 0; i < 6; i++) await pass()

    // The old group's PDP pieces, each removed once; its market deal left to its term; the new group's copies bought once.
    const ended = (await s.gateway.dealStore.ofGroup(old)).filter((d) => d.route === 'pdp')
    expect(ended.map((d) => [d.state, d.failure?.code])).toEqual([
      ['ended', 'RETIRED'],
      ['ended', 'RETIRED'],
    ])
    expect([...removals].sort()).toEqual(ended.map(pieceKey).sort())
    expect((await s.gateway.dealStore.ofGroup(old)).find((d) => d.route === 'market')!.state).toBe('active')
    const now = await s.gateway.dealStore.ofGroup(written.id)
    expect(
      now
        .filter((d) => d.state !== 'failed')
        .map((d) => d.route)
        .sort(),
    ).toEqual(['market', 'pdp', 'pdp'])
    expect((await newGroups()).map((g) => g.id)).toEqual([written.id])
    for (const p of kept) {
      expect(await groupIdsOf(s, p)).toEqual([written.id])
      const res = await s.get(p)
      expect(Buffer.from(await res.arrayBuffer()).equals(Buffer.from(files.get(p)!))).toBe(true)
    }
  }, 300_000)
})
