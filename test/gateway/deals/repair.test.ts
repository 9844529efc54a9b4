import { randomBytes } from 'node:crypto'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { EPOCHS_PER_DAY } from '../../../server/shared/epochs.ts'
import { startDealStack, type DealStack } from './harness.ts'

let stack: DealStack | undefined
afterEach(async () => {
  await stack?.close()
  stack = undefined
})

interface ShownDeal {
  provider: string
  state: string
  dealId: number
  endEpoch: number
  isRetrievable: boolean
}

const details = async (s: DealStack, path: string) => (await s.fileInfo(path)).result.file.details
const groupFiles = (s: DealStack) => readdirSync(join(s.dir, 'gateway', 'groups'))
const providerHasPiece = (s: DealStack, provider: string, pieceCid: string) =>
  existsSync(join(s.dir, 'simnet', 'providers', provider, `${pieceCid}.car`))

async function offloadedFile(s: DealStack, path: string, size = 300_000): Promise<Buffer> {
  const bytes = randomBytes(size)
  expect((await s.put(path, bytes)).status).toBe(201)
  await s.seal()
  expect(await s.runUntil(async () => (await details(s, path)).state === 'offloaded')).toBe(true)
  expect(groupFiles(s)).toEqual([])
  return bytes
}

async function readBack(s: DealStack, path: string): Promise<Buffer> {
  const res = await s.get(path)
  expect(res.status).toBe(200)
  return Buffer.from(await res.arrayBuffer())
}

/**
 * Runs the engine until the file's group is offloaded with two retrievable deals
 * ending after `oldEnd`; returns every state the group went through.
 */
async function renewal(s: DealStack, path: string, oldEnd: number): Promise<Set<string>> {
  const groupStates = new Set<string>()
  const renewed = await s.runUntil(
    async () => {
      const d = await details(s, path)
      groupStates.add(d.groups[0].state)
      const fresh = d.groups[0].deals.filter((x: ShownDeal) => x.endEpoch > oldEnd && x.isRetrievable)
      return d.groups[0].state === 'offloaded' && fresh.length >= 2
    },
    { epochsPerTick: 30 },
  )
  expect(renewed).toBe(true)
  return groupStates
}

describe('repair of offloaded groups', () => {
  it('a provider loses the data, later deals expire: each time the group is reloaded from a remaining copy, a new provider fetches its CAR, and it is offloaded again', async () => {
    // A tiny renewal window, so that only real expiry counts here.
    const s = (stack = await startDealStack({ copies: 2, price: '5000000', retrievalCheckMs: 60_000, renewBeforeDays: 0.001 }))
    const bytes = await offloadedFile(s, '/lost.bin')
    const before = (await details(s, '/lost.bin')).groups[0]
    const loser = before.deals[0].provider
    s.sim.setFault(loser, 'lose')
    s.clock.now += 120_000

    const groupStates = new Set<string>()
    const reloadReasons = new Set<string>()
    const newcomers = (d: any) =>
      d.groups[0].deals.filter((x: ShownDeal) => x.isRetrievable && !before.deals.some((b: ShownDeal) => b.provider === x.provider))
    const repaired = await s.runUntil(async () => {
      const d = await details(s, '/lost.bin')
      groupStates.add(d.groups[0].state)
      if (d.groups[0].state === 'reload') reloadReasons.add(`${d.groups[0].reasonCode}: ${d.groups[0].reason}`)
      return d.groups[0].state === 'offloaded' && newcomers(d).length >= 1
    })
    expect(repaired).toBe(true)
    // It came back to disk to be sent (reload), then left again.
    expect(groupStates).toContain('reload')
    // Meanwhile its reason said how its new copy stood, not the reload it was past.
    expect([...reloadReasons].some((r) => /^DEALS_UNDER_WAY: reloaded to make new copies: .*(fetching the data|to seal)/.test(r))).toBe(
      true,
    )
    expect(groupFiles(s)).toEqual([])

    const d = await details(s, '/lost.bin')
    expect(d.state).toBe('offloaded')
    expect(d.retrievableCopies).toBe(2)
    // The lost copy is still shown, honestly, as not retrievable.
    expect(d.groups[0].deals.find((x: ShownDeal) => x.provider === loser).isRetrievable).toBe(false)
    // The new provider really fetched the CAR (same piece CID) over HTTP.
    for (const x of newcomers(d)) expect(providerHasPiece(s, x.provider, before.pieceCid)).toBe(true)
    expect((await readBack(s, '/lost.bin')).equals(bytes)).toBe(true)

    // The two first deals end together; the repaired copy, made later, ends later and is what is left.
    const firstEnd = Math.max(...before.deals.map((x: ShownDeal) => x.endEpoch))
    const survivor = newcomers(d)[0] as ShownDeal
    expect(survivor.endEpoch).toBeGreaterThan(firstEnd)
    s.advance(firstEnd - s.simnet.headEpoch() + 1)
    expect(
      await s.runUntil(async () => {
        const now = await details(s, '/lost.bin')
        return (
          now.groups[0].state === 'offloaded' &&
          now.retrievableCopies === 2 &&
          now.groups[0].deals.every((x: ShownDeal) => x.endEpoch > firstEnd)
        )
      }),
    ).toBe(true)
    const ended = (await s.gateway.dealStore.ofGroup(1)).filter((x) => before.deals.some((b: ShownDeal) => b.dealId === x.dealId))
    expect(ended.map((x) => x.state)).toEqual(['ended', 'ended'])
    expect(ended.map((x) => x.failure)).toEqual([{ code: 'EXPIRED' }, { code: 'EXPIRED' }])
    expect(groupFiles(s)).toEqual([])
    expect((await readBack(s, '/lost.bin')).equals(bytes)).toBe(true)
  })

  it('a group held for repair goes back to offloaded on restart and is repaired after it', async () => {
    const s = (stack = await startDealStack({ copies: 2, price: '5000000', retrievalCheckMs: 60_000 }))
    const bytes = await offloadedFile(s, '/restart.bin')
    const first = (await details(s, '/restart.bin')).groups[0]
    s.sim.setFault(first.deals[1].provider, 'lose')
    s.clock.now += 120_000
    expect(await s.runUntil(async () => (await details(s, '/restart.bin')).groups[0].state === 'reload', { epochsPerTick: 1 })).toBe(true)

    await s.restartGateway()
    expect((await details(s, '/restart.bin')).groups[0].state).toBe('offloaded')
    expect(groupFiles(s)).toEqual([])
    expect(
      await s.runUntil(async () => {
        const d = await details(s, '/restart.bin')
        return d.groups[0].state === 'offloaded' && d.retrievableCopies === 2 && d.groups[0].deals.length === 3
      }),
    ).toBe(true)
    expect((await readBack(s, '/restart.bin')).equals(bytes)).toBe(true)
  })

  it('no provider takes new deals: the held group gives its disk back after DEAL_REPAIR_HOLD_DAYS and is reloaded again later', async () => {
    let refuse = false
    const s = (stack = await startDealStack({
      copies: 2,
      price: '5000000',
      retrievalCheckMs: 60_000,
      repairHoldDays: 1,
      // The deal service finds no provider for the repair: the reloaded group can get no new copy.
      service: (client) => ({
        ...client,
        bestProviders: async (q) => (refuse ? { providers: [], reason: 'NO_PROVIDER_AVAILABLE' } : client.bestProviders(q)),
      }),
    }))
    const bytes = await offloadedFile(s, '/held.bin')
    refuse = true
    s.sim.setFault((await details(s, '/held.bin')).groups[0].deals[0].provider, 'lose')
    s.clock.now += 120_000
    expect(await s.runUntil(async () => (await details(s, '/held.bin')).groups[0].state === 'reload', { epochsPerTick: 1 })).toBe(true)
    expect(groupFiles(s).length).toBeGreaterThan(0)

    // Held for less than a day (2880 epochs) of chain time: still on disk, waiting for providers.
    expect(await s.runUntil(async () => false, { max: 20, epochsPerTick: 120 })).toBe(false)
    expect((await details(s, '/held.bin')).groups[0].state).toBe('reload')
    // Past the hold: released to offloaded, its local bytes gone again, the copy count still honest.
    expect(
      await s.runUntil(async () => (await details(s, '/held.bin')).groups[0].state === 'offloaded', { max: 10, epochsPerTick: 120 }),
    ).toBe(true)
    expect(groupFiles(s)).toEqual([])
    expect((await details(s, '/held.bin')).retrievableCopies).toBe(1)

    // Providers are back: after the retry wait the group is reloaded and repaired for good.
    refuse = false
    expect(
      await s.runUntil(async () => {
        const d = await details(s, '/held.bin')
        return d.groups[0].state === 'offloaded' && d.retrievableCopies === 2
      }),
    ).toBe(true)
    expect(groupFiles(s)).toEqual([])
    expect((await readBack(s, '/held.bin')).equals(bytes)).toBe(true)
  })

  it('no provider can serve the data: nothing is proposed, the group stays offloaded and honest', async () => {
    const s = (stack = await startDealStack({ copies: 2, price: '5000000', retrievalCheckMs: 60_000 }))
    await offloadedFile(s, '/gone.bin')
    for (const x of (await details(s, '/gone.bin')).groups[0].deals) s.sim.setFault(x.provider, 'lose')
    s.clock.now += 120_000
    // A few ticks of failed reload attempts (in the background), then one that has settled.
    let ticks = 0
    expect(await s.runUntil(async () => ++ticks > 5 && (await details(s, '/gone.bin')).groups[0].state === 'offloaded')).toBe(true)
    const d = await details(s, '/gone.bin')
    expect(d.groups[0].state).toBe('offloaded')
    expect(d.retrievableCopies).toBe(0)
    expect(d.groups[0].deals).toHaveLength(2)
    expect((await s.gateway.dealStore.ofGroup(1)).filter((x) => x.state !== 'active')).toEqual([])
  })
})

describe('renewal', () => {
  it('a group still ready for deals (its CAR on disk) gets replacements for deals about to end, without a reload', async () => {
    const s = (stack = await startDealStack({ copies: 2, price: '5000000', retrievalCheckMs: 60_000, renewBeforeDays: 30 }))
    const bytes = randomBytes(300_000)
    expect((await s.put('/ready.bin', bytes)).status).toBe(201)
    await s.seal()
    // Both providers have fetched the CAR and published their deals (a Curio-like one tells the deal id
    // only once it is sealed, so the gateway may not know it yet).
    const taken = async () => {
      const deals = (await s.gateway.dealStore.ofGroup(1)).filter((x) => x.state !== 'failed' && x.proposalId)
      return deals.filter((x) => x.state !== 'proposed' || s.sim.proposalState(x.provider, x.proposalId!).state === 'published')
    }
    expect(await s.runUntil(async () => (await taken()).length === 2, { epochsPerTick: 1 })).toBe(true)
    const old = await taken()
    const oldEnd = Math.max(...old.map((x) => x.endEpoch))
    // The chain moves on while the gateway is not looking: when it next sees these deals they are
    // active but end in 20 days, inside the 30-day renewal window, so they never count for offload.
    s.advance(Math.min(...old.map((x) => x.endEpoch)) - 20 * EPOCHS_PER_DAY - s.simnet.headEpoch())

    const groupStates = await renewal(s, '/ready.bin', oldEnd)
    // The new providers fetched the CAR the group still had: it was never reloaded.
    expect([...groupStates]).toEqual(expect.arrayContaining(['ready_for_deals', 'offloaded']))
    expect(groupStates).not.toContain('reload')
    const d = await details(s, '/ready.bin')
    expect(
      d.groups[0].deals
        .filter((x: ShownDeal) => old.some((o) => o.provider === x.provider && x.endEpoch <= oldEnd))
        .map((x: ShownDeal) => x.state),
    ).toEqual(['active', 'active'])
    expect(groupFiles(s)).toEqual([])
    expect((await readBack(s, '/ready.bin')).equals(bytes)).toBe(true)
  })

  it('deals approaching their end get replacements for an offloaded group, which then outlive the old ones', async () => {
    const s = (stack = await startDealStack({ copies: 2, price: '5000000', retrievalCheckMs: 60_000, renewBeforeDays: 30 }))
    const bytes = await offloadedFile(s, '/renew.bin')
    const old = (await details(s, '/renew.bin')).groups[0].deals as ShownDeal[]
    const oldEnd = Math.max(...old.map((x) => x.endEpoch))
    // 20 days before the old deals end: inside the 30-day renewal window.
    s.advance(Math.min(...old.map((x) => x.endEpoch)) - 20 * EPOCHS_PER_DAY - s.simnet.headEpoch())
    expect((await details(s, '/renew.bin')).state).toBe('offloaded')

    const groupStates = await renewal(s, '/renew.bin', oldEnd)
    expect(groupStates).toContain('reload')
    expect(groupFiles(s)).toEqual([])
    // The old deals still run until their end, beside the new ones.
    expect((await details(s, '/renew.bin')).groups[0].deals.filter((x: ShownDeal) => old.some((o) => o.dealId === x.dealId))).toHaveLength(
      2,
    )

    // Past the old end: the expired deals are no longer shown; the new copies carry the file.
    s.advance(oldEnd - s.simnet.headEpoch() + 1)
    expect(
      await s.runUntil(async () => (await details(s, '/renew.bin')).groups[0].deals.every((x: ShownDeal) => x.endEpoch > oldEnd), {
        max: 5,
      }),
    ).toBe(true)
    const d = await details(s, '/renew.bin')
    expect(d.state).toBe('offloaded')
    expect(d.retrievableCopies).toBe(2)
    expect((await readBack(s, '/renew.bin')).equals(bytes)).toBe(true)
  })
})
