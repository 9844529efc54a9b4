/**
 * Several deal service replicas on one PostgreSQL database (behind a load
 * balancer): whatever one writes, the others serve at once, as nothing a
 * request needs is kept in a replica's memory.
 */
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { StoredDeal } from '../../server/service/deal-store.ts'
import { describeEachStore } from '../helpers/stores.ts'
import { startTestService, T0, TEST_CLIENT, type TestService } from './helpers.ts'

const KEY = 'fgs_replicas-test-key'
const deals = '/private/v1/get-on-chain-deals'
const days = '/private/v1/get-network-epoch-duration-from-days'

describeEachStore(
  'two deal services on one database',
  ({ databaseUrl: newDatabase }) => {
    let a: TestService
    let b: TestService

    beforeAll(async () => {
      const databaseUrl = newDatabase('replicas')
      // Started at once on an empty database: both migrate and bootstrap the default tenant together.
      ;[a, b] = await Promise.all([0, 1].map(() => startTestService({ config: { databaseUrl, apiKey: KEY } })))
    })
    afterAll(async () => {
      await a?.close()
      await b?.close()
    })

    it('started together, they make one default tenant, which the same key opens on both', async () => {
      expect((await a.service.tenants.list()).map((t) => t.name)).toEqual(['default'])
      for (const s of [a, b]) expect((await s.post(days, { duration: 1 })).status).toBe(200)
    })

    it('a tenant and key made through one authenticate on the other; a key revoked there is refused at once', async () => {
      const tenant = await a.service.tenants.create('acme', 'clients-free')
      const key = await a.service.tenants.createKey(tenant.id)
      expect((await b.post(days, { duration: 1 }, { 'x-api-key': key })).status).toBe(200)
      // The plan is read per request too: premium endpoints open on b once a changes it.
      expect((await b.post('/private/v1/onboarding-policy/export', undefined, { 'x-api-key': key })).status).toBe(403)
      await a.service.tenants.setPlan(tenant.id, 'clients-premium')
      expect((await b.post('/private/v1/onboarding-policy/export', undefined, { 'x-api-key': key })).status).toBe(200)
      await a.service.tenants.revokeKeys(tenant.id)
      expect((await b.post(days, { duration: 1 }, { 'x-api-key': key })).status).toBe(401)
    })

    it('a policy saved via one is the one the other exports', async () => {
      const sp = await a.simnet.listProviders()
      const policy = {
        settings: { priority: 'number_of_copies' },
        mixGroup: { numberOfCopies: 2 },
        groups: [
          {
            name: 'europe',
            numberOfCopies: 1,
            providers: [
              { addressId: sp[0], comment: 'Paris' },
              { addressId: sp[1], comment: 'Lyon' },
            ],
          },
        ],
      }
      expect((await a.post('/private/v1/onboarding-policy/import?mode=replace', policy)).status).toBe(200)
      expect((await b.post('/private/v1/onboarding-policy/export')).json.result).toEqual(policy)
    })

    it('a deal page cursor from one continues on the other, in both sorts', async () => {
      const tenant = (await a.service.tenants.byName('default'))!
      const proposal = (i: number) => ({
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
      })
      const stored: StoredDeal[] = Array.from({ length: 10_005 }, (_, k) => ({
        dealId: 1_000_000 + k,
        lastUpdateMs: T0 - (k % 3) * 1000,
        proposal: proposal(k),
        state: { status: 'active', publishedEpoch: 10, onChainStartEpoch: 50, onChainEndEpoch: -1 },
      }))
      await a.service.deals.insertMany(tenant.id, stored)
      for (const sortBy of ['dealId', 'lastUpdate']) {
        const first = await a.post(deals, { sortBy })
        expect(Object.keys(first.json.result)).toHaveLength(10_000)
        const onB = await b.post(deals, { sortBy, next: first.json.next })
        const onA = await a.post(deals, { sortBy, next: first.json.next })
        expect(Object.keys(onB.json.result)).toHaveLength(5)
        expect(onB.text).toBe(onA.text)
        const seen = new Set([...Object.keys(first.json.result), ...Object.keys(onB.json.result)])
        expect(seen.size).toBe(10_005)
      }
    })

    it('syncs deals on one replica at a time: the other skips its round meanwhile, and syncs after', async () => {
      const client = (await a.simnet.lookupId(TEST_CLIENT))!
      for (const s of [a, b]) await s.simnet.seedClientDeals(client, 20)
      // The seeded deals the market still holds (ended ones are gone from it, and from what a sync can find).
      let onChain = 0
      for await (const _ of a.simnet.dealsByClients([client])) onChain++
      expect(onChain).toBeGreaterThan(10)
      const [headOfA, headOfB] = [a.simnet.chainHead, b.simnet.chainHead]
      let release!: () => void
      const gate = new Promise<void>((r) => (release = r))
      let entered!: () => void
      const syncing = new Promise<void>((r) => (entered = r))
      let roundsOfB = 0
      // a's round stops at its first chain call (lock held) until the test lets it go.
      a.simnet.chainHead = async () => (entered(), await gate, headOfA())
      b.simnet.chainHead = async () => (roundsOfB++, headOfB())
      try {
        const first = a.service.sync.syncOnce()
        await syncing
        expect(await b.service.sync.syncOnce()).toBe(0)
        expect(roundsOfB).toBe(0)
        release()
        expect(await first).toBe(onChain)
        // Once a is done, b's round runs (and finds a's writes: nothing changed).
        expect(await b.service.sync.syncOnce()).toBe(0)
        expect(roundsOfB).toBe(1)
      } finally {
        release()
        a.simnet.chainHead = headOfA
        b.simnet.chainHead = headOfB
      }
    })
  },
  { only: 'postgres' },
)
