import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import type { DealStack } from './harness.ts'
import { dealStackPerTest, details, groupIdsOf, groupRow } from './deleted-files.ts'

/**
 * Compaction on the deal market: a group whose deleted files make up more
 * than half of its bytes (COMPACT_DEAD_FRACTION) for RETIRE_AFTER_SECONDS (an
 * hour of the test's clock: two passes) has its live files written into a
 * new group, stored as any other, and is retired once that one has its
 * copies; at every pass the live files keep the copies the policy asks for.
 * A restart at each step loses nothing and buys nothing twice. The PDP
 * route's side is in compact-pdp.test.ts.
 */
const stacks = dealStackPerTest()

const HOUR = 3_600_000

async function readBack(s: DealStack, path: string): Promise<Buffer> {
  const res = await s.get(path)
  expect(res.status).toBe(200)
  return Buffer.from(await res.arrayBuffer())
}

/** Files of 200 000 bytes each, stored in one group, offloaded with its copies; its id. */
async function oneGroup(s: DealStack, files: Map<string, Buffer>): Promise<number> {
  for (const [path, bytes] of files) expect((await s.put(path, bytes)).status).toBe(201)
  await s.seal()
  const paths = [...files.keys()]
  const allOffloaded = async () => {
    for (const p of paths) if ((await details(s, p)).state !== 'offloaded') return false
    return true
  }
  expect(await s.runUntil(allOffloaded)).toBe(true)
  const [group] = await groupIdsOf(s, paths[0])
  for (const p of paths) expect(await groupIdsOf(s, p)).toEqual([group])
  return group
}

describe('compacting groups mostly of deleted files (deal market)', () => {
  it('60 % deleted: the live files move to a new group, stored with its copies, and the old one is retired; copies never below the policy, a restart at each step changes nothing', async () => {
    const s = await stacks.start({ copies: 2, retireAfterSeconds: 3600, retrievalCheckMs: 60_000 })
    const files = new Map([0, 1, 2, 3, 4].map((i) => [`/f${i}.bin`, randomBytes(200_000)]))
    const old = await oneGroup(s, files)
    const oldDeals = await s.gateway.dealStore.ofGroup(old)
    expect(oldDeals.map((d) => d.state)).toEqual(['active', 'active'])

    for (const p of ['/f1.bin', '/f2.bin', '/f3.bin']) expect((await s.remove(p)).status).toBe(204)
    const live = ['/f0.bin', '/f4.bin']
    /** Every pass: each live file shows (and has) the two copies the policy asks for, and reads back whole. */
    const pass = async () => {
      await s.runUntil(() => false, { max: 1, pauseMs: 20 })
      for (const p of live) expect((await details(s, p)).retrievableCopies).toBeGreaterThanOrEqual(2)
    }
    const newGroups = async () => (await s.gateway.content.groups()).filter((g) => g.id !== old)

    await pass()
    const marked = await groupRow(s, old)
    expect(marked.sparseSinceMs).toBeDefined()
    expect(marked.compactingMs).toBeUndefined()
    // Restart after the mark: it is kept, and the compaction starts an hour after it, not after the restart.
    await s.restartGateway()
    expect((await groupRow(s, old)).sparseSinceMs).toBe(marked.sparseSinceMs)
    while ((await groupRow(s, old)).compactingMs === undefined) await pass()
    expect((await groupRow(s, old)).compactingMs! - marked.sparseSinceMs!).toBeGreaterThanOrEqual(HOUR)

    // The live files are written again into the writable group (in the background): 400 000 bytes, no more.
    for (let i = 0; i < 100 && !(await newGroups()).some((g) => g.size >= 400_000); i++) await new Promise((r) => setTimeout(r, 50))
    const [written] = await newGroups()
    expect(written.size).toBe(400_000)
    // Restart after the rewrite: nothing is written again, the files still show the old group and its copies.
    await s.restartGateway()
    await pass()
    expect((await newGroups()).map((g) => [g.id, g.size])).toEqual([[written.id, 400_000]])
    for (const p of live) expect(await groupIdsOf(s, p)).toEqual([old])

    // The new group goes the normal way; a restart once its deals are under way buys none twice.
    await s.seal()
    while ((await s.gateway.dealStore.ofGroup(written.id)).length === 0) await pass()
    expect((await groupRow(s, old)).retiredMs).toBeUndefined()
    await s.restartGateway()
    while ((await groupRow(s, old)).retiredMs === undefined) await pass()

    // Retired once the new group has its copies: the files show it, its copies, and read back whole.
    const retired = await groupRow(s, old)
    expect((await groupRow(s, written.id)).state).toBe('offloaded')
    for (const p of live) {
      expect(await groupIdsOf(s, p)).toEqual([written.id])
      expect((await readBack(s, p)).equals(files.get(p)!)).toBe(true)
    }
    await s.restartGateway()
    for (let i = 0; i < 4; i++) await pass()
    // The old group's deals run to their term, never replaced; the new group has its two, bought once.
    expect((await s.gateway.dealStore.ofGroup(old)).map((d) => [d.id, d.state])).toEqual(oldDeals.map((d) => [d.id, 'active']))
    expect((await s.gateway.dealStore.ofGroup(written.id)).filter((d) => d.state !== 'failed').map((d) => d.state)).toEqual([
      'active',
      'active',
    ])
    expect((await groupRow(s, old)).retiredMs).toBe(retired.retiredMs)
    expect((await newGroups()).map((g) => g.id)).toEqual([written.id])
    for (const p of live) expect((await readBack(s, p)).equals(files.get(p)!)).toBe(true)
  }, 180_000)

  it('a group 30 % deleted is not compacted', async () => {
    const s = await stacks.start({ copies: 2, retireAfterSeconds: 3600 })
    const files = new Map([0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((i) => [`/g${i}.bin`, randomBytes(100_000)]))
    const group = await oneGroup(s, files)
    for (const p of ['/g1.bin', '/g2.bin', '/g3.bin']) expect((await s.remove(p)).status).toBe(204)
    for (let i = 0; i < 6; i++) await s.runUntil(() => false, { max: 1 })
    const row = await groupRow(s, group)
    expect([row.sparseSinceMs, row.compactingMs, row.retiredMs]).toEqual([undefined, undefined, undefined])
    expect((await s.gateway.content.groups()).map((g) => g.id)).toEqual([group])
  }, 120_000)
})
