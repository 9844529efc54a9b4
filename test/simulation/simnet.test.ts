import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createSimnet } from '../../server/simulation/simnet/index.ts'
import { dealStatus } from '../../server/network/deal-status.ts'
import { paddedPieceSize } from '../../server/shared/piece.ts'
import type { MarketDeal } from '../../server/network/types.ts'

const GENESIS = 1704067200
const T0 = Date.UTC(2025, 0, 15)

describe('simulated network', () => {
  it('derives the head from the clock and the genesis (30 s epochs)', async () => {
    const clock = { now: T0 }
    const net = createSimnet({ seed: 's', genesis: GENESIS, now: () => clock.now })
    const head = (await net.chainHead()).epoch
    expect(head).toBe(Math.floor((T0 / 1000 - GENESIS) / 30))
    clock.now += 90_000
    expect((await net.chainHead()).epoch).toBe(head + 3)
  })

  it('runs faster under a speed factor', async () => {
    const clock = { now: T0 }
    const net = createSimnet({ seed: 's', genesis: GENESIS, now: () => clock.now, speed: 10 })
    const head = net.headEpoch()
    clock.now += 30_000
    expect(net.headEpoch()).toBe(head + 10)
  })

  it('keeps one clock in its state file: every process sees the same head, and a new speed continues from it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'simnet-clock-'))
    const stateFile = join(dir, 'chain.sqlite')
    const clock = { now: T0 }
    const open = (speed: number) => createSimnet({ seed: 's', genesis: GENESIS, now: () => clock.now, speed, stateFile })
    try {
      const first = open(300)
      clock.now += 60_000
      // Another process on the same file, started later, sees the same head as the first.
      const second = open(300)
      expect(second.headEpoch()).toBe(first.headEpoch())
      expect(second.clock).toEqual(first.clock)
      const before = second.headEpoch()
      await first.close()
      await second.close()
      // Restarted in real time: the head carries on from where it was, then moves 1 epoch per 30 s.
      const slow = open(1)
      expect(slow.headEpoch()).toBe(before)
      clock.now += 30_000
      expect(slow.headEpoch()).toBe(before + 1)
      await slow.close()
      // And sped up again, never back.
      const fast = open(300)
      expect(fast.headEpoch()).toBe(before + 1)
      clock.now += 1_000
      expect(fast.headEpoch()).toBe(before + 11)
      await fast.close()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('is deterministic under a seed, and another seed gives another network', async () => {
    const a = createSimnet({ seed: 'one', genesis: GENESIS, now: () => T0 })
    const b = createSimnet({ seed: 'one', genesis: GENESIS, now: () => T0 })
    const c = createSimnet({ seed: 'two', genesis: GENESIS, now: () => T0 })
    expect(await a.listProviders()).toEqual(await b.listProviders())
    expect(await a.listProviders()).not.toEqual(await c.listProviders())
    const id = (await a.listProviders())[0]
    expect(await a.providerTerms(id)).toEqual(await b.providerTerms(id))
  })

  it('moves a proposed deal to published and then active, and it expires at its end epoch', async () => {
    const clock = { now: T0 }
    const net = createSimnet({ seed: 'deals', genesis: GENESIS, now: () => clock.now })
    const head = net.headEpoch()
    const providers = await net.listProviders()
    const online = []
    for (const p of providers) if ((await net.providerTerms(p))!.online) online.push(p)
    const statuses = new Map<number, string[]>()
    const ids: number[] = []
    for (let i = 0; i < 40; i++) {
      const r = await net.proposeDeal({
        PieceCID: { '/': 'baga6ea4seaqao7s73y24kcutaosvacpdjgfe5pw76ooefnyqw4ynr3d2y6x2mpq' },
        PieceSize: 2 ** 30,
        VerifiedDeal: true,
        Client: 'f01000',
        Provider: online[i % online.length],
        Label: '',
        StartEpoch: head + 5760,
        EndEpoch: head + 5760 + 518400,
        StoragePricePerEpoch: '0',
        ProviderCollateral: '0',
        ClientCollateral: '0',
      })
      expect(r.accepted).toBe(true)
      if (r.accepted) ids.push(r.dealId)
    }
    // Not on chain until published.
    expect(await net.getDeal(ids[0])).toBeNull()
    const record = async () => {
      const h = net.headEpoch()
      for (const id of ids) {
        const d = (await net.getDeal(id)) as MarketDeal | null
        const list = statuses.get(id) ?? []
        list.push(d ? dealStatus(d, h).status : 'proposed')
        statuses.set(id, list)
      }
    }
    await record()
    for (const hours of [1, 48, 24 * 100]) {
      clock.now = T0 + hours * 3_600_000
      await record()
    }
    const finals = [...statuses.values()].map((s) => s.at(-1))
    expect([...statuses.values()].every((s) => s[0] === 'proposed')).toBe(true)
    expect(statuses.get(ids[0])![1]).toBe('published')
    expect(finals.filter((s) => s === 'active').length).toBeGreaterThan(30)
    // The market removes a deal not activated by its start and a slashed one: StateMarketStorageDeal finds it no more.
    expect(finals.every((s) => ['active', 'proposed'].includes(s!))).toBe(true)
    expect(finals.filter((s) => s === 'proposed').length).toBeGreaterThan(0)
    const active = ids.find((id) => statuses.get(id)!.at(-1) === 'active')!
    const deal = (await net.getDeal(active))!
    clock.now += (deal.proposal.EndEpoch - net.headEpoch() - 1) * 30_000
    expect(dealStatus((await net.getDeal(active))!, net.headEpoch()).status).toBe('active')
    // Expired, then cleaned up: gone from the market's state.
    clock.now += 60_000
    expect(await net.getDeal(active)).toBeNull()
  })

  it('refuses deals at unknown or offline providers', async () => {
    const net = createSimnet({ seed: 'deals', genesis: GENESIS, now: () => T0 })
    const r = await net.proposeDeal({
      PieceCID: { '/': 'x' },
      PieceSize: 2048,
      VerifiedDeal: false,
      Client: 'f01000',
      Provider: 'f099',
      Label: '',
      StartEpoch: 1,
      EndEpoch: 2,
      StoragePricePerEpoch: '0',
      ProviderCollateral: '0',
      ClientCollateral: '0',
    })
    expect(r).toEqual({ accepted: false, reason: 'PROVIDER_NOT_FOUND' })
  })

  it('pads piece sizes as CommP does', () => {
    expect(paddedPieceSize(1)).toBe(128)
    expect(paddedPieceSize(127)).toBe(128)
    expect(paddedPieceSize(128)).toBe(256)
    expect(paddedPieceSize(1_000_000_000)).toBe(2 ** 30)
  })
})
