/**
 * The deal service's stores (tenants, deals, onboarding policy) on SQLite and
 * on PostgreSQL: the same tests, each on a fresh, empty store.
 */
import { describe, expect, it } from 'vitest'
import type { OnChainDealState } from '../../server/network/deal-status.ts'
import type { DealProposal, NetworkPort } from '../../server/network/types.ts'
import { createDealStore, type DealStore, type StoredDeal } from '../../server/service/deal-store.ts'
import { ServiceError } from '../../server/service/errors.ts'
import { createPolicyStore, type PolicyDocument } from '../../server/service/onboarding-policy.ts'
import { migrateService, SERVICE_STEPS } from '../../server/service/schema.ts'
import { createTenantStore } from '../../server/service/tenants.ts'
import { migrateSql, type Sql } from '../../server/shared/sql/index.ts'
import { describeEachStore, type StoreUnderTest } from '../helpers/stores.ts'

const T0 = Date.UTC(2025, 0, 15, 12, 0, 0)

function proposal(i: number, provider = 'f02000'): DealProposal {
  return {
    PieceCID: { '/': `baga6ea4seaqpiece${i % 10}` },
    PieceSize: 34359738368,
    VerifiedDeal: true,
    Client: 'f01000',
    Provider: provider,
    Label: `deal ${i}`,
    StartEpoch: 100,
    EndEpoch: 600_000,
    StoragePricePerEpoch: '0',
    ProviderCollateral: '0',
    ClientCollateral: '0',
  }
}
const active: OnChainDealState = { status: 'active', publishedEpoch: 10, onChainStartEpoch: 50, onChainEndEpoch: -1 }

/** Deals 1..n; lastUpdate cycles over 7 values, so many deals share one. */
const deals = (n: number): StoredDeal[] =>
  Array.from({ length: n }, (_, k) => ({
    dealId: k + 1,
    lastUpdateMs: T0 - ((k + 1) % 7) * 1000,
    proposal: proposal(k + 1),
    state: active,
  }))

async function openService(open: StoreUnderTest['open']): Promise<Sql> {
  const sql = await open('service')
  await migrateService(sql)
  return sql
}

/** Every deal id of a tenant, page after page, in the order served. */
async function pageThrough(store: DealStore, tenantId: number, sort: 'dealId' | 'lastUpdate', pageSize: number) {
  const ids: number[] = []
  const cursors: string[] = []
  let cursor: string | null = null
  for (;;) {
    const page = await store.page(tenantId, sort, cursor, pageSize)
    const part = JSON.parse(page.resultJson) as Record<string, { lastUpdate: number }>
    // Keys in the order written (JSON.parse would sort integer keys).
    const order = [...page.resultJson.matchAll(/"(\d+)":\{"lastUpdate"/g)].map((m) => Number(m[1]))
    expect(Object.keys(part)).toHaveLength(order.length)
    if (page.next === null) return { ids, cursors }
    ids.push(...order)
    cursors.push(page.next)
    cursor = page.next
  }
}

describeEachStore('deal service stores', ({ open, dialect }) => {
  describe('tenants', () => {
    it('creates tenants with their plan, finds them by id and name, lists them in creation order', async () => {
      const sql = await openService(open)
      const tenants = createTenantStore(sql)
      const a = await tenants.create('acme', 'clients-free')
      const b = await tenants.create('bolt', 'providers-free')
      expect(a).toEqual({ id: a.id, name: 'acme', plan: 'clients-free', clientAddresses: [] })
      expect(await tenants.get(b.id)).toEqual(b)
      expect(await tenants.byName('bolt')).toEqual(b)
      expect(await tenants.byName('nobody')).toBeUndefined()
      expect((await tenants.list()).map((t) => t.name)).toEqual(['acme', 'bolt'])
      await tenants.setPlan(a.id, 'clients-premium')
      expect((await tenants.get(a.id))!.plan).toBe('clients-premium')
      await expect(tenants.create('acme', 'clients-free')).rejects.toThrow()
      await sql.close()
    })

    it('ensure makes one tenant however many callers ask at once, and keeps its plan', async () => {
      const sql = await openService(open)
      const tenants = createTenantStore(sql)
      const made = await Promise.all(Array.from({ length: 5 }, () => tenants.ensure('default', 'clients-premium')))
      expect(new Set(made.map((t) => t.id)).size).toBe(1)
      expect(await tenants.list()).toHaveLength(1)
      expect((await tenants.ensure('default', 'clients-free')).plan).toBe('clients-premium')
      await sql.close()
    })

    it('keys open their tenant until revoked; a key given twice stays with its first tenant', async () => {
      const sql = await openService(open)
      const tenants = createTenantStore(sql)
      const a = await tenants.create('acme', 'clients-free')
      const b = await tenants.create('bolt', 'clients-free')
      const key = await tenants.createKey(a.id, 'ci')
      expect(key).toMatch(/^fgs_/)
      expect((await tenants.byKey(key))!.name).toBe('acme')
      expect(await tenants.byKey(`${key}x`)).toBeUndefined()
      await tenants.createKey(b.id, 'taken', key)
      expect((await tenants.byKey(key))!.name).toBe('acme')
      await tenants.createKey(a.id)
      expect(await tenants.revokeKeys(a.id)).toBe(2)
      expect(await tenants.byKey(key)).toBeUndefined()
      await sql.close()
    })

    it('keeps client addresses and the blacklist as sets, sorted', async () => {
      const sql = await openService(open)
      const tenants = createTenantStore(sql)
      const a = await tenants.create('acme', 'clients-free')
      for (const addr of ['f1zzz', 'f1aaa', 'f1zzz']) await tenants.addClientAddress(a.id, addr)
      expect((await tenants.get(a.id))!.clientAddresses).toEqual(['f1aaa', 'f1zzz'])
      await tenants.removeClientAddress(a.id, 'f1aaa')
      expect((await tenants.byName('acme'))!.clientAddresses).toEqual(['f1zzz'])
      for (const p of ['f02000', 'f01000', 'f02000']) await tenants.addToBlacklist(a.id, p)
      expect(await tenants.blacklist(a.id)).toEqual(['f01000', 'f02000'])
      await tenants.removeFromBlacklist(a.id, 'f01000')
      expect(await tenants.blacklist(a.id)).toEqual(['f02000'])
      await sql.close()
    })
  })

  describe('deals', () => {
    it('pages by deal id and by lastUpdate with cursors: every deal once, in order, tenants apart', async () => {
      const sql = await openService(open)
      const tenants = createTenantStore(sql)
      const [a, b] = [await tenants.create('acme', 'clients-free'), await tenants.create('bolt', 'clients-free')]
      const store = createDealStore(sql)
      // 2 345: full bulk statements and a remainder of several sizes.
      await store.insertMany(a.id, deals(2345))
      await store.insertMany(b.id, deals(3))
      expect(await store.count(a.id)).toBe(2345)
      expect(await store.count(b.id)).toBe(3)

      const byId = await pageThrough(store, a.id, 'dealId', 1000)
      expect(byId.ids).toEqual(Array.from({ length: 2345 }, (_, i) => i + 1))
      expect(byId.cursors).toEqual(['1000', '2000', '2345'])

      const byUpdate = await pageThrough(store, a.id, 'lastUpdate', 1000)
      const expected = deals(2345)
        .sort((x, y) => x.lastUpdateMs - y.lastUpdateMs || x.dealId - y.dealId)
        .map((d) => d.dealId)
      expect(byUpdate.ids).toEqual(expected)
      expect(byUpdate.cursors[0]).toBe(`${expected[999]}@${deals(2345)[expected[999] - 1].lastUpdateMs}`)
      await sql.close()
    })

    it('streams a page in chunks of a few rows, and the whole page is the same either way', async () => {
      const sql = await openService(open)
      const tenant = await createTenantStore(sql).create('acme', 'clients-free')
      const store = createDealStore(sql)
      await store.insertMany(tenant.id, deals(10))
      const chunks: string[] = []
      const it = store.pageChunks(tenant.id, 'lastUpdate', null, 7, 3)
      let step = await it.next()
      for (; !step.done; step = await it.next()) chunks.push(step.value)
      expect(chunks.map((c) => c.split('"lastUpdate"').length - 1)).toEqual([3, 3, 1])
      const page = await store.page(tenant.id, 'lastUpdate', null, 7)
      expect(page.resultJson).toBe(`{${chunks.join(',')}}`)
      expect(page.next).toBe(step.value)
      // The record as the API shows it.
      const record = JSON.parse(page.resultJson)['6']
      expect(record).toEqual({ lastUpdate: (T0 - 6000) / 1000, proposal: proposal(6), state: active })
      await sql.close()
    })

    it('accepts a bare deal id as a lastUpdate cursor, and refuses bad cursors with a 400', async () => {
      const sql = await openService(open)
      const tenants = createTenantStore(sql)
      const [a, b] = [await tenants.create('acme', 'clients-free'), await tenants.create('bolt', 'clients-free')]
      const store = createDealStore(sql)
      await store.insertMany(a.id, deals(30))
      const first = await store.page(a.id, 'lastUpdate', null, 10)
      const full = await store.page(a.id, 'lastUpdate', first.next, 10)
      expect((await store.page(a.id, 'lastUpdate', first.next!.split('@')[0], 10)).resultJson).toBe(full.resultJson)
      for (const [tenant, sort, cursor] of [
        [a.id, 'dealId', 'abc'],
        [a.id, 'dealId', '-5'],
        [a.id, 'lastUpdate', '5@x'],
        [a.id, 'lastUpdate', '99999'],
        [b.id, 'lastUpdate', '5'],
      ] as const) {
        const err = await store.page(tenant, sort, cursor).catch((e: unknown) => e)
        expect(err, `${sort} ${cursor}`).toBeInstanceOf(ServiceError)
        expect((err as ServiceError).status).toBe(400)
      }
      expect(await store.page(b.id, 'dealId', null)).toEqual({ resultJson: '{}', count: 0, next: null })
      await sql.close()
    })

    it('upsert writes new deals and changed states only, moving lastUpdate of what changed', async () => {
      const sql = await openService(open)
      const tenant = await createTenantStore(sql).create('acme', 'clients-free')
      const store = createDealStore(sql)
      const synced = (n: number) => Array.from({ length: n }, (_, k) => ({ dealId: k + 1, proposal: proposal(k + 1), state: active }))
      expect(await store.upsert(tenant.id, synced(3), T0)).toBe(3)
      expect(await store.upsert(tenant.id, synced(3), T0 + 1000)).toBe(0)
      const expired: OnChainDealState = { status: 'expired', publishedEpoch: 10, onChainStartEpoch: 50, onChainEndEpoch: 600_000 }
      const moved = [...synced(4)]
      moved[1] = { ...moved[1], state: expired }
      expect(await store.upsert(tenant.id, moved, T0 + 2000)).toBe(2)
      const page = await store.page(tenant.id, 'lastUpdate', null)
      const order = [...page.resultJson.matchAll(/"(\d+)":\{"lastUpdate":([\d.]+)/g)].map((m) => [Number(m[1]), Number(m[2])])
      expect(order).toEqual([
        [1, T0 / 1000],
        [3, T0 / 1000],
        [2, T0 / 1000 + 2],
        [4, T0 / 1000 + 2],
      ])
      expect(JSON.parse(page.resultJson)['2'].state).toEqual(expired)
      await sql.close()
    })

    it('keeps the deals of a store made before page entries were kept, and pages them as it pages new ones', async () => {
      const sql = await open('service')
      await migrateSql(sql, 'service', SERVICE_STEPS.slice(0, 1))
      const tenants = createTenantStore(sql)
      const [old, fresh] = [await tenants.create('old', 'clients-free'), await tenants.create('fresh', 'clients-free')]
      // lastUpdate with and without milliseconds, one ending in a zero: each printed as JS prints ms / 1000.
      const stored = [T0, T0 + 1, T0 + 120, T0 + 999].map((lastUpdateMs, k) => ({ ...deals(k + 1)[k], lastUpdateMs }))
      for (const d of stored) {
        await sql.run(
          'INSERT INTO deals (tenant_id, deal_id, last_update_ms, piece_cid, provider, status, published_epoch, start_epoch, end_epoch, proposal) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
          [
            old.id,
            d.dealId,
            d.lastUpdateMs,
            d.proposal.PieceCID['/'],
            d.proposal.Provider,
            d.state.status,
            d.state.publishedEpoch,
            d.state.onChainStartEpoch,
            d.state.onChainEndEpoch,
            JSON.stringify(d.proposal),
          ],
        )
      }
      await migrateService(sql)
      const store = createDealStore(sql)
      await store.insertMany(fresh.id, stored)
      for (const sort of ['dealId', 'lastUpdate'] as const) {
        const [before, after] = [await store.page(old.id, sort, null), await store.page(fresh.id, sort, null)]
        expect(before.resultJson).toBe(after.resultJson)
        expect(Object.values(JSON.parse(before.resultJson)).map((d) => (d as { lastUpdate: number }).lastUpdate)).toEqual(
          [T0, T0 + 1, T0 + 120, T0 + 999].map((ms) => ms / 1000),
        )
        expect(before.next).toBe(after.next)
      }
      await sql.close()
    })

    it.runIf(dialect === 'postgres')('pages by index right after a big first load, not by sorting every deal of the tenant', async () => {
      const sql = await openService(open)
      const tenant = await createTenantStore(sql).create('acme', 'clients-free')
      await createDealStore(sql).insertMany(tenant.id, deals(20_000))
      for (const order of ['deal_id', 'last_update_ms, deal_id']) {
        const plan = await sql.column<string>(
          `EXPLAIN SELECT page_entry FROM deals WHERE tenant_id = ? AND deal_id > ? ORDER BY ${order} LIMIT 10000`,
          [tenant.id, 0],
        )
        expect(plan.join('\n'), order).not.toMatch(/Sort/)
      }
      await sql.close()
    })

    it('pieceDeals lists the providers of a piece with their deal status, for that tenant only', async () => {
      const sql = await openService(open)
      const tenants = createTenantStore(sql)
      const [a, b] = [await tenants.create('acme', 'clients-free'), await tenants.create('bolt', 'clients-free')]
      const store = createDealStore(sql)
      const piece = (dealId: number, provider: string, status: 'active' | 'published') => ({
        dealId,
        proposal: { ...proposal(0, provider), PieceCID: { '/': 'baga-the-piece' } },
        state: { ...active, status },
      })
      await store.upsert(a.id, [piece(1, 'f01', 'active'), piece(2, 'f02', 'published')], T0)
      await store.upsert(b.id, [piece(3, 'f03', 'active')], T0)
      const held = await store.pieceDeals(a.id, 'baga-the-piece')
      expect(held.sort((x, y) => x.provider.localeCompare(y.provider))).toEqual([
        { provider: 'f01', status: 'active' },
        { provider: 'f02', status: 'published' },
      ])
      expect(await store.pieceDeals(a.id, 'baga-other')).toEqual([])
      await sql.close()
    })
  })

  describe('onboarding policy', () => {
    const providers = ['f01001', 'f01002', 'f01003', 'f01004']
    // Every provider is on chain; minerInfo yields once, so concurrent imports interleave.
    const network = {
      listProviders: async () => providers,
      minerInfo: async (id: string) => (await new Promise((r) => setTimeout(r, 5)), { id }),
    } as unknown as NetworkPort
    const options = (replace: boolean) => ({ replace, blacklist: [], network, addressNetwork: 'mainnet' as const })
    const doc = (groups: [string, string[]][], mix = 1): PolicyDocument => ({
      settings: { priority: 'policy_respected' },
      mixGroup: { numberOfCopies: mix },
      groups: groups.map(([name, members]) => ({
        name,
        numberOfCopies: 1,
        providers: members.map((addressId) => ({ addressId, comment: `in ${name}` })),
      })),
    })

    it('exports the default policy, then what was imported: merges add groups, a replace swaps all', async () => {
      const sql = await openService(open)
      const tenant = await createTenantStore(sql).create('acme', 'clients-premium')
      const policies = createPolicyStore(sql)
      expect(await policies.export(tenant.id)).toEqual({
        settings: { priority: 'policy_respected' },
        mixGroup: { numberOfCopies: 3 },
        groups: [],
      })
      await policies.import(tenant.id, doc([['europe', ['f01001', 'f01002']]]), options(false))
      await policies.import(tenant.id, doc([['asia', ['f01003']]], 2), options(false))
      expect(await policies.export(tenant.id)).toEqual({
        settings: { priority: 'policy_respected' },
        mixGroup: { numberOfCopies: 2 },
        groups: doc([
          ['europe', ['f01001', 'f01002']],
          ['asia', ['f01003']],
        ]).groups,
      })
      await policies.import(tenant.id, doc([['americas', ['f01002', 'f01004']]]), options(true))
      expect(await policies.export(tenant.id)).toEqual(doc([['americas', ['f01002', 'f01004']]]))
      await sql.close()
    })

    it('of two imports racing for one group name, one lands and the other gets GROUP_NAME_ALREADY_USED, whoever checked first', async () => {
      const sql = await openService(open)
      const tenant = await createTenantStore(sql).create('acme', 'clients-premium')
      const policies = createPolicyStore(sql)
      const results = await Promise.allSettled([
        policies.import(tenant.id, doc([['europe', ['f01001']]]), options(false)),
        policies.import(tenant.id, doc([['europe', ['f01002']]]), options(false)),
      ])
      expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected'])
      const failure = (results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason
      expect(failure).toBeInstanceOf(ServiceError)
      expect(failure.message).toBe('GROUP_NAME_ALREADY_USED')
      expect((await policies.export(tenant.id)).groups).toHaveLength(1)
      await sql.close()
    })
  })

  it(`stores its tables ${dialect === 'postgres' ? 'in schema service' : 'in its own file'}, migrated once`, async () => {
    const sql = await openService(open)
    await migrateService(sql)
    expect(await sql.get('SELECT version FROM schema_versions WHERE module = ?', ['service'])).toEqual({ version: SERVICE_STEPS.length })
    if (dialect === 'postgres') {
      const tables = await sql.all<{ table_name: string }>(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'service' ORDER BY table_name",
      )
      expect(tables.map((t) => t.table_name)).toEqual([
        'api_keys',
        'blacklist',
        'client_addresses',
        'deal_scan',
        'deals',
        'policies',
        'policy_groups',
        'policy_providers',
        'schema_versions',
        'tenants',
      ])
    }
    await sql.close()
  })
})
