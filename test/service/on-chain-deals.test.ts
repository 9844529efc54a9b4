import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { StoredDeal } from '../../server/service/deal-store.ts'
import type { DealProposal } from '../../server/network/types.ts'
import { expectErrorEnvelope, startTestService, T0, type TestService } from './helpers.ts'

let t: TestService
const path = '/private/v1/get-on-chain-deals'

function proposal(i: number): DealProposal {
  return {
    PieceCID: { '/': `baga6ea4seaqpiece${i}` },
    PieceSize: 34359738368,
    VerifiedDeal: true,
    Client: 'f01000',
    Provider: 'f02000',
    Label: '',
    StartEpoch: 100,
    EndEpoch: 600_000,
    StoragePricePerEpoch: '0',
    ProviderCollateral: '0',
    ClientCollateral: '0',
  }
}
const state = { status: 'active' as const, publishedEpoch: 10, onChainStartEpoch: 50, onChainEndEpoch: -1 }

beforeAll(async () => {
  t = await startTestService()
  // 25 003 deals: ids 1..25003; lastUpdate cycles over 7 values so many deals share one.
  const deals: StoredDeal[] = []
  for (let i = 1; i <= 25_003; i++) deals.push({ dealId: i, lastUpdateMs: T0 - (i % 7) * 1000, proposal: proposal(i), state })
  const tenant = (await t.service.tenants.byName('default'))!
  await t.service.deals.insertMany(tenant.id, deals)
})
afterAll(() => t.close())

async function pageAll(sortBy?: string): Promise<{ ids: number[]; pages: number[]; lastUpdates: number[] }> {
  const ids: number[] = []
  const lastUpdates: number[] = []
  const pages: number[] = []
  let next: string | null = null
  for (;;) {
    const body: Record<string, unknown> = sortBy ? { sortBy } : {}
    if (next) body.next = next
    const r = await t.post(path, body)
    expect(r.status).toBe(200)
    expect(r.json.error).toBeNull()
    // Keys in the order the server wrote them.
    const keys = [...r.text.matchAll(/"(\d+)":\{"lastUpdate":([\d.]+)/g)]
    if (keys.length === 0) {
      expect(r.json.next).toBeNull()
      return { ids, pages, lastUpdates }
    }
    pages.push(keys.length)
    for (const k of keys) {
      ids.push(Number(k[1]))
      lastUpdates.push(Number(k[2]))
    }
    expect(r.json.next).toBeTypeOf('string')
    next = r.json.next
  }
}

describe('get-on-chain-deals', () => {
  it('pages by deal id, 10 000 per page, every deal exactly once', async () => {
    const { ids, pages } = await pageAll()
    expect(pages).toEqual([10_000, 10_000, 5_003])
    expect(ids).toEqual(Array.from({ length: 25_003 }, (_, i) => i + 1))
  })

  it('the dealId cursor is the id of the last element', async () => {
    const r = await t.post(path, {})
    expect(r.json.next).toBe('10000')
    const record = r.json.result['1']
    expect(record.state).toEqual(state)
    expect(record.proposal.PieceCID).toEqual({ '/': 'baga6ea4seaqpiece1' })
    expect(record.lastUpdate).toBe((T0 - 1000) / 1000)
  })

  it('pages by lastUpdate with an unambiguous cursor despite ties, every deal once, in order', async () => {
    const { ids, lastUpdates } = await pageAll('lastUpdate')
    expect(ids.length).toBe(25_003)
    expect(new Set(ids).size).toBe(25_003)
    for (let i = 1; i < lastUpdates.length; i++) expect(lastUpdates[i]).toBeGreaterThanOrEqual(lastUpdates[i - 1])
  })

  it('accepts the bare id of the last element as a lastUpdate cursor', async () => {
    const first = await t.post(path, { sortBy: 'lastUpdate' })
    const lastId = first.json.next.split('@')[0]
    const byFull = await t.post(path, { sortBy: 'lastUpdate', next: first.json.next })
    const byId = await t.post(path, { sortBy: 'lastUpdate', next: lastId })
    expect(byId.text).toBe(byFull.text)
  })

  it('next is null when nothing is found', async () => {
    const r = await t.post(path, { next: '99999999' })
    expect(r.json).toEqual({ error: null, next: null, result: {} })
  })

  it('another tenant sees none of these deals', async () => {
    const other = await t.service.tenants.create('other', 'clients-free')
    const r = await t.post(path, undefined, { 'x-api-key': await t.service.tenants.createKey(other.id) })
    expect(r.json).toEqual({ error: null, next: null, result: {} })
  })

  it.each([
    [{ sortBy: 'price' }, 'unknown sortBy'],
    [{ next: 'abc' }, 'non-numeric cursor'],
    [{ next: '-5' }, 'negative cursor'],
    [{ next: 12 }, 'cursor not a string'],
    [{ sortBy: 'lastUpdate', next: '5@x' }, 'malformed lastUpdate cursor'],
    [{ sortBy: 'lastUpdate', next: '987654321' }, 'cursor naming no deal of the tenant'],
    [{ page: 2 }, 'unknown field'],
  ])('400 for %j (%s)', async (body: unknown, _why: string) => {
    const r = await t.post(path, body)
    expect(r.status).toBe(400)
    expectErrorEnvelope(r.json)
  })
})

describe('deals from the simulated network', () => {
  it("syncs a client's deals with statuses derived from chain state, and updates lastUpdate when they move", async () => {
    const tenant = await t.service.tenants.create('sim-client', 'clients-free')
    const key = await t.service.tenants.createKey(tenant.id)
    await t.service.tenants.addClientAddress(tenant.id, 'f17uoq6tp427uzv7fztkbsnn64iwotfrristwpryy')
    const clientId = (await t.simnet.lookupId('f17uoq6tp427uzv7fztkbsnn64iwotfrristwpryy'))!
    await t.simnet.seedClientDeals(clientId, 200)
    await t.service.sync.syncOnce()
    const first = await t.post(path, {}, { 'x-api-key': key })
    const records = Object.values(first.json.result) as { state: { status: string }; proposal: { Client: string } }[]
    // Found without StateMarketDeals (walking deal ids): exactly the client's deals still on chain; those already removed are gone.
    const onChain: number[] = []
    for await (const d of t.simnet.dealsByClients([clientId])) onChain.push(d.dealId)
    expect(Object.keys(first.json.result).map(Number).sort()).toEqual(onChain.sort())
    expect(records.length).toBeGreaterThan(100)
    expect(records.every((r) => r.proposal.Client === clientId)).toBe(true)
    const statuses = new Set(records.map((r) => r.state.status))
    expect(statuses.has('active')).toBe(true)
    for (const s of statuses) expect(['published', 'published-expired', 'active', 'slashed', 'expired']).toContain(s)

    // A year later deals have ended: statuses move and so does lastUpdate.
    t.clock.now += 600 * 86_400_000
    expect(await t.service.sync.syncOnce()).toBeGreaterThan(0)
    const later = await t.post(path, { sortBy: 'lastUpdate' }, { 'x-api-key': key })
    const moved = Object.values(later.json.result) as { lastUpdate: number; state: { status: string } }[]
    expect(moved.some((r) => r.state.status === 'expired' && r.lastUpdate === t.clock.now / 1000)).toBe(true)
  })
})
