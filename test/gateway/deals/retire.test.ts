import { randomBytes } from 'node:crypto'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { DealStack } from './harness.ts'
import { dealStackPerTest, details, groupIdOf, groupRow } from './deleted-files.ts'

/**
 * Delete means delete, on the deal market: a group whose files are all
 * deleted is retired once RETIRE_AFTER_SECONDS (an hour here, on the test's
 * clock: two passes) have passed since a pass first found it dead; its deals
 * run to their term but are never repaired, renewed or reloaded for; a file
 * restored meanwhile costs nothing. The PDP route's side is in
 * retire-pdp.test.ts.
 */
const stacks = dealStackPerTest()

const HOUR = 3_600_000

/** Stores the bytes alone in a group and runs the engine until it is offloaded; its group id. */
async function offloaded(s: DealStack, path: string, bytes: Uint8Array): Promise<number> {
  expect((await s.put(path, bytes)).status).toBe(201)
  await s.seal()
  expect(await s.runUntil(async () => (await details(s, path)).state === 'offloaded')).toBe(true)
  return groupIdOf(s, path)
}

/** Passes of the engine, the clock moved `ms` in all (half an hour a pass). */
async function passes(s: DealStack, ms: number): Promise<void> {
  const n = Math.ceil(ms / (30 * 60_000))
  for (let i = 0; i < n; i++) await s.runUntil(() => false, { max: 1 })
}

async function readBack(s: DealStack, path: string): Promise<Buffer> {
  const res = await s.get(path)
  expect(res.status).toBe(200)
  return Buffer.from(await res.arrayBuffer())
}

describe('retiring groups of deleted files (deal market)', () => {
  it('a deleted file alone in its group: retired after the grace period, its deals kept to term, never repaired or reloaded when a provider loses it', async () => {
    const s = await stacks.start({ copies: 2, retireAfterSeconds: 3600, retrievalCheckMs: 60_000 })
    const gone = await offloaded(s, '/gone.bin', randomBytes(200_000))
    const kept = await offloaded(s, '/kept.bin', randomBytes(200_000))
    expect(gone).not.toBe(kept)
    const before = await s.gateway.dealStore.ofGroup(gone)
    expect(before.filter((d) => d.state === 'active')).toHaveLength(2)

    expect((await s.remove('/gone.bin')).status).toBe(204)
    await passes(s, HOUR / 2)
    // Seen dead, not retired yet: the undo window.
    const dead = await groupRow(s, gone)
    expect(dead.deadSinceMs).toBeDefined()
    expect(dead.retiredMs).toBeUndefined()
    await passes(s, HOUR)
    const retired = await groupRow(s, gone)
    expect(retired.retiredMs).toBeDefined()
    expect(retired.retiredMs! - retired.deadSinceMs!).toBeGreaterThanOrEqual(HOUR)
    // The live file's group is untouched.
    expect((await groupRow(s, kept)).deadSinceMs).toBeUndefined()

    // A provider loses the deleted file's data: on main, the group is reloaded and a new deal bought for it.
    s.sim.setFault(before[0].provider, 'lose')
    const states = new Set<string>()
    for (let i = 0; i < 12; i++) {
      await s.runUntil(() => false, { max: 1 })
      states.add((await groupRow(s, gone)).state)
    }
    expect([...states]).toEqual(['offloaded'])
    const after = await s.gateway.dealStore.ofGroup(gone)
    // No new deal; the deals are kept to their term, and every row stays for the record.
    expect(after.map((d) => d.id)).toEqual(before.map((d) => d.id))
    expect(after.map((d) => d.state)).toEqual(['active', 'active'])
    expect((await s.gateway.dealStore.audit(gone)).length).toBe(2)
  }, 120_000)

  it('a file restored within the grace period (the same bytes PUT again): nothing retired, nothing bought', async () => {
    const s = await stacks.start({ copies: 2, retireAfterSeconds: 3600, retrievalCheckMs: 60_000 })
    const bytes = randomBytes(200_000)
    const group = await offloaded(s, '/doc.bin', bytes)
    const cid = (await s.fileInfo('/doc.bin')).result.file.cid
    expect((await s.remove('/doc.bin')).status).toBe(204)
    await passes(s, HOUR / 2)
    expect((await groupRow(s, group)).deadSinceMs).toBeDefined()

    // Restored from the trash: the same CID, the same group, alive again.
    expect((await s.put('/doc.bin', bytes)).status).toBe(201)
    expect((await s.fileInfo('/doc.bin')).result.file.cid).toBe(cid)
    expect(await groupIdOf(s, '/doc.bin')).toBe(group)
    await passes(s, 2 * HOUR)
    const row = await groupRow(s, group)
    expect(row.deadSinceMs).toBeUndefined()
    expect(row.retiredMs).toBeUndefined()
    // Nothing bought meanwhile: the same two deals.
    expect((await s.gateway.dealStore.ofGroup(group)).map((d) => d.state)).toEqual(['active', 'active'])
    expect((await readBack(s, '/doc.bin')).equals(bytes)).toBe(true)
  }, 120_000)

  it('a file deleted before its group had copies: none are made, and once retired its CAR and blocks leave the disk', async () => {
    const s = await stacks.start({ copies: 2, retireAfterSeconds: 3600 })
    expect((await s.put('/tmp.bin', randomBytes(200_000))).status).toBe(201)
    await s.seal()
    const group = await groupIdOf(s, '/tmp.bin')
    const onDisk = () => readdirSync(join(s.dir, 'gateway', 'groups')).filter((f) => f.startsWith(`${group}.`))
    expect(onDisk().sort()).toEqual([`${group}.blocks`, `${group}.car`])
    expect((await s.remove('/tmp.bin')).status).toBe(204)
    await passes(s, HOUR / 2)
    expect((await groupRow(s, group)).state).toBe('ready_for_deals')
    await passes(s, HOUR)
    const row = await groupRow(s, group)
    expect(row.retiredMs).toBeDefined()
    // Nothing was bought for it, and nothing of it is left on this disk.
    expect(await s.gateway.dealStore.ofGroup(group)).toEqual([])
    expect(row.state).toBe('offloaded')
    expect(onDisk()).toEqual([])
  }, 120_000)

  it('a group with one live file and one deleted one is not retired', async () => {
    const s = await stacks.start({ copies: 2, retireAfterSeconds: 3600 })
    expect((await s.put('/a.bin', randomBytes(100_000))).status).toBe(201)
    expect((await s.put('/b.bin', randomBytes(100_000))).status).toBe(201)
    await s.seal()
    expect(await s.runUntil(async () => (await details(s, '/a.bin')).state === 'offloaded')).toBe(true)
    const group = await groupIdOf(s, '/a.bin')
    expect(await groupIdOf(s, '/b.bin')).toBe(group)
    expect((await s.remove('/b.bin')).status).toBe(204)
    await passes(s, 3 * HOUR)
    const row = await groupRow(s, group)
    expect(row.deadSinceMs).toBeUndefined()
    expect(row.retiredMs).toBeUndefined()
  }, 120_000)

  it('a restart during the grace period keeps when the group was first seen dead; the bytes PUT again after retirement are stored anew', async () => {
    const s = await stacks.start({ copies: 2, retireAfterSeconds: 3 * 3600 })
    const bytes = randomBytes(200_000)
    const group = await offloaded(s, '/late.bin', bytes)
    expect((await s.remove('/late.bin')).status).toBe(204)
    await passes(s, HOUR / 2)
    const deadSinceMs = (await groupRow(s, group)).deadSinceMs
    expect(deadSinceMs).toBeDefined()

    await s.restartGateway()
    await passes(s, HOUR)
    expect((await groupRow(s, group)).deadSinceMs).toBe(deadSinceMs)
    // Retired three hours after it was first seen dead, not three hours after the restart.
    while (s.clock.now < deadSinceMs! + 3 * HOUR) await passes(s, HOUR / 2)
    await passes(s, HOUR / 2)
    const retired = await groupRow(s, group)
    expect(retired.retiredMs).toBeDefined()
    expect(retired.retiredMs! - deadSinceMs!).toBeLessThan(3 * HOUR + HOUR)

    // Restored from the trash after the grace period: its old group's copies are going, so the bytes go into a new
    // group, which is stored and offloaded as any other, and they read back.
    expect((await s.put('/late.bin', bytes)).status).toBe(201)
    const again = await groupIdOf(s, '/late.bin')
    expect(again).not.toBe(group)
    await s.seal()
    expect(await s.runUntil(async () => (await details(s, '/late.bin')).state === 'offloaded')).toBe(true)
    expect(existsSync(join(s.dir, 'gateway', 'groups', `${group}.car`))).toBe(false)
    expect((await readBack(s, '/late.bin')).equals(bytes)).toBe(true)
    expect((await groupRow(s, group)).retiredMs).toBe(retired.retiredMs)
  }, 120_000)
})
