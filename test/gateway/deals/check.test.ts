import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CID } from 'multiformats/cid'
import * as raw from 'multiformats/codecs/raw'
import { sha256 } from 'multiformats/hashes/sha2'
import { pino } from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import type { ContentStore } from '../../../server/gateway/content/index.ts'
import { createRetrievalChecks } from '../../../server/gateway/deals/check.ts'
import { countingCopies } from '../../../server/gateway/deals/copies.ts'
import { emptyReport } from '../../../server/gateway/deals/deal-engine.ts'
import { createDealStore } from '../../../server/gateway/deals/deal-store.ts'
import type { StorageRoute } from '../../../server/gateway/deals/route.ts'
import type { DealStore, RouteName } from '../../../server/gateway/deals/types.ts'
import { openSql, type Sql } from '../../../server/shared/sql/index.ts'
import { startDealStack, type DealStack } from './harness.ts'

let stack: DealStack | undefined
let cleanup: (() => Promise<void>) | undefined
afterEach(async () => {
  await stack?.close()
  await cleanup?.()
  stack = undefined
  cleanup = undefined
})

const details = async (s: DealStack, path: string) => (await s.fileInfo(path)).result.file.details

describe('retrieval checks on the deal market (simulated network)', () => {
  it('a five-minute outage of every provider starts no repair and buys no deal; a provider that is really gone is replaced', async () => {
    const s = (stack = await startDealStack({ copies: 2, retrievalCheckMs: 60_000 }))
    expect((await s.put('/kept.bin', new Uint8Array(300_000).fill(7))).status).toBe(201)
    await s.seal()
    expect(await s.runUntil(async () => (await details(s, '/kept.bin')).state === 'offloaded')).toBe(true)
    const before = await s.gateway.dealStore.ofGroup(1)

    // Every provider times out for five minutes: a check round a minute, each of its checks failing.
    const providers = await s.simnet.listProviders()
    for (const p of providers) s.sim.setFault(p, 'timeout')
    const states = new Set<string>()
    for (let minute = 0; minute < 5; minute++) {
      await s.runUntil(async () => false, { max: 1, epochsPerTick: 2 })
      states.add((await details(s, '/kept.bin')).groups[0].state)
    }
    for (const p of providers) s.sim.setFault(p, null)
    await s.runUntil(async () => false, { max: 3, epochsPerTick: 2 })
    // No copy stopped counting: the group was never reloaded for new deals, and no deal was proposed.
    expect(states).toEqual(new Set(['offloaded']))
    expect((await s.gateway.dealStore.ofGroup(1)).map((d) => d.id)).toEqual(before.map((d) => d.id))
    const shown = await details(s, '/kept.bin')
    expect(shown.retrievableCopies).toBe(2)

    // One provider loses the data: one failed check is not enough, three in a row while the other answers are.
    const loser = before[0].provider
    s.sim.setFault(loser, 'lose')
    await s.runUntil(async () => false, { max: 2, epochsPerTick: 2 })
    expect((await details(s, '/kept.bin')).groups[0].state).toBe('offloaded')
    expect(await s.gateway.dealStore.ofGroup(1)).toHaveLength(before.length)
    const replaced = await s.runUntil(async () => {
      const d = await details(s, '/kept.bin')
      return d.groups[0].state === 'offloaded' && d.groups[0].deals.filter((x: { isRetrievable: boolean }) => x.isRetrievable).length === 2
    })
    expect(replaced).toBe(true)
    const now = await s.gateway.dealStore.ofGroup(1)
    expect(now.find((d) => d.id === before[0].id)).toMatchObject({ failedChecks: expect.any(Number), checkFailedMs: expect.any(Number) })
    expect(now.some((d) => d.state === 'active' && d.retrievable && !before.some((b) => b.provider === d.provider))).toBe(true)
  })
})

/** A block, its CID, and copies of one group on fake routes whose providers answer, or not, as the test says. */
async function checkBench() {
  const dir = mkdtempSync(join(tmpdir(), 'checks-'))
  const sql: Sql = await openSql({ file: join(dir, 'gateway.sqlite'), schema: 'gateway' })
  const clock = { now: Date.UTC(2026, 10, 27) }
  const deals: DealStore = await createDealStore(sql, () => clock.now)
  const block = new Uint8Array(64).fill(9)
  const cid = CID.createV1(raw.code, await sha256.digest(block)).toString()
  const down = new Set<string>()
  const route = (name: RouteName) =>
    ({
      name,
      lasting: () => true,
      retrieveBlock: async (d: { provider: string }) => {
        if (down.has(d.provider)) throw new Error(`${d.provider} does not answer`)
        return block
      },
    }) as unknown as StorageRoute
  const routes = { market: route('market'), pdp: route('pdp') }
  const content = { sampleBlock: async () => cid } as unknown as ContentStore
  const checks = createRetrievalChecks(
    {
      deals,
      content,
      logger: pino({ level: 'silent' }),
      now: () => clock.now,
      withTimeout: (run) => run(new AbortController().signal),
      retrievalCheckMs: 60_000,
      stopAfter: 3,
    },
    (name) => routes[name as RouteName],
  )
  const copy = async (groupId: number, r: RouteName, provider: string) => {
    const d = await deals.create({ groupId, route: r, provider, pieceCid: 'baga', startEpoch: 1, endEpoch: 9_999_999, proposalEpoch: 1 })
    await deals.markProposed(d.id, {})
    await deals.markPublished(d.id, { dealId: d.id, dataSetId: d.id })
    await deals.markActive(d.id)
  }
  cleanup = async () => {
    await sql.close()
    rmSync(dir, { recursive: true, force: true })
  }
  return {
    deals,
    down,
    copy,
    /** One check round, a minute (or `ms`) after the last. */
    async round(ms = 60_000) {
      clock.now += ms
      await checks.run(emptyReport())
    },
    counting: async (groupId: number, r: RouteName) =>
      countingCopies(routes[r], await deals.liveOfGroup(groupId), 0).map((d) => d.provider),
  }
}

describe('retrieval checks on PDP copies', () => {
  it('blames no provider while nothing answers, and stops counting one copy after three failed checks in a row while the others answer', async () => {
    const b = await checkBench()
    for (const [group, providers] of [
      [1, ['pdp:1', 'pdp:2']],
      [2, ['pdp:2', 'pdp:3']],
    ] as const)
      for (const p of providers) await b.copy(group, 'pdp', p)
    await b.round()

    // Our side is cut off for five minutes: every check of each round fails, on every provider.
    for (const p of ['pdp:1', 'pdp:2', 'pdp:3']) b.down.add(p)
    for (let minute = 0; minute < 5; minute++) await b.round()
    expect(await b.counting(1, 'pdp')).toEqual(['pdp:1', 'pdp:2'])
    expect(await b.counting(2, 'pdp')).toEqual(['pdp:2', 'pdp:3'])
    expect((await b.deals.inState('active')).every((d) => d.failedChecks === undefined)).toBe(true)

    // pdp:1 is really gone; the others answer again.
    b.down.clear()
    b.down.add('pdp:1')
    await b.round()
    await b.round()
    expect(await b.counting(1, 'pdp')).toEqual(['pdp:1', 'pdp:2'])
    await b.round()
    expect(await b.counting(1, 'pdp')).toEqual(['pdp:2'])
    expect(await b.counting(2, 'pdp')).toEqual(['pdp:2', 'pdp:3'])
  })

  it('stops counting a copy whose provider answers only three checks in four, though it never fails twice in a row', async () => {
    const b = await checkBench()
    await b.copy(1, 'pdp', 'pdp:1')
    await b.copy(1, 'pdp', 'pdp:2')
    const counted: string[][] = []
    for (let round = 1; round <= 20; round++) {
      if (round % 4 === 0) b.down.add('pdp:1')
      else b.down.delete('pdp:1')
      await b.round()
      counted.push(await b.counting(1, 'pdp'))
    }
    // Its fifth failure among its last 20 checks, each while pdp:2 answered, is the one it stops counting at.
    expect(counted.slice(0, 19).every((providers) => providers.includes('pdp:1'))).toBe(true)
    expect(counted[19]).toEqual(['pdp:2'])
  })

  it("checks another provider's copy when the only checks due all failed: one that answers puts the blame on the failed one", async () => {
    const b = await checkBench()
    await b.copy(1, 'pdp', 'pdp:1')
    await b.round()
    // The market copy is checked half a minute later: at the next round only pdp:1's copy is due.
    await b.copy(2, 'market', 'f01000')
    await b.round(30_000)
    b.down.add('pdp:1')
    await b.round(30_000)
    const [failed] = await b.deals.ofGroup(1)
    expect(failed).toMatchObject({ retrievable: false, failedChecks: 1 })
    await b.round()
    await b.round()
    expect(await b.counting(1, 'pdp')).toEqual([])
    expect(await b.counting(2, 'market')).toEqual(['f01000'])
  })
})
