import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createDealStore } from '../../../server/gateway/deals/deal-store.ts'
import type { DealStore } from '../../../server/gateway/deals/types.ts'
import type { Sql } from '../../../server/shared/sql/index.ts'
import { describeEachStore } from '../../helpers/stores.ts'

describeEachStore('gateway deal store', ({ open }) => {
  let sql: Sql
  beforeEach(async () => {
    sql = await open('gateway')
  })
  afterEach(() => sql.close())

  const fresh = async (groupId = 1): Promise<{ store: DealStore; deal: Awaited<ReturnType<DealStore['create']>> }> => {
    let t = 1_000
    const store = await createDealStore(sql, () => (t += 10))
    const deal = await store.create({
      groupId,
      provider: 'f01000',
      pieceCid: 'baga6ea4seaq',
      startEpoch: 100,
      endEpoch: 200,
      tokenHash: 'h',
      proposalEpoch: 40,
    })
    return { store, deal }
  }

  describe('transfer size', () => {
    it('keeps the bytes a provider downloads (CAR then zeros) for a deal, across a reopened store; older deals have none', async () => {
      const { store, deal } = await fresh()
      expect(deal.transferSize).toBeUndefined()
      // A 2 MiB CAR proposed as a 32 GiB piece: 32 GiB × 127/128 bytes, past 32-bit integers.
      const big = await store.create({
        groupId: 2,
        provider: 'f01000',
        pieceCid: 'baga6ea4seaq',
        startEpoch: 100,
        endEpoch: 200,
        tokenHash: 'h',
        proposalEpoch: 40,
        transferSize: 34_091_302_912,
      })
      expect(big.transferSize).toBe(34_091_302_912)
      const reopened = await createDealStore(sql)
      expect((await reopened.get(big.id))!.transferSize).toBe(34_091_302_912)
      expect((await reopened.get(deal.id))!.transferSize).toBeUndefined()
    })
  })

  describe('PDP copies', () => {
    it('keeps a PDP copy apart from deal-market deals, with its data set, piece, proof and funded end, and shows them', async () => {
      const { store, deal } = await fresh()
      const copy = await store.create({
        groupId: 1,
        route: 'pdp',
        provider: 'pdp:3',
        pieceCid: 'bafkzcib',
        startEpoch: 50,
        endEpoch: 50,
        proposalEpoch: 50,
      })
      expect(copy).toMatchObject({ route: 'pdp', provider: 'pdp:3', state: 'proposing' })
      expect(copy.tokenHash).toBeUndefined()
      expect(deal.route).toBe('market')
      await store.markAccepted(copy.id, '0xadd')
      await store.markPublished(copy.id, 12)
      await store.recordPdpCopy(copy.id, { dataSetId: 12, pieceId: 0, addedEpoch: 61, retrievalUrl: 'http://127.0.0.1:9/piece/bafkzcib' })
      await store.recordProof(copy.id, { endEpoch: 90_000 })
      await store.markActive(copy.id)
      await store.recordProof(copy.id, { lastProofEpoch: 301, endEpoch: 95_000 })
      // A later poll without a new proof keeps the last one.
      await store.recordProof(copy.id, { endEpoch: 96_000 })
      await store.recordCheck(copy.id, true)
      expect(await store.get(copy.id)).toMatchObject({
        dataSetId: 12,
        pieceId: 0,
        addedEpoch: 61,
        retrievalUrl: 'http://127.0.0.1:9/piece/bafkzcib',
        lastProofEpoch: 301,
        endEpoch: 96_000,
        dealId: 12,
      })
      await store.markAccepted(deal.id, 'uuid')
      expect((await store.inState('proposed', 'market')).map((d) => d.id)).toEqual([deal.id])
      expect((await store.inState('active', 'pdp')).map((d) => d.id)).toEqual([copy.id])
      expect(await store.inState('active', 'market')).toEqual([])
      expect((await store.view(1)).deals).toEqual([
        { provider: 'f01000', state: 'proposed', dealId: 0, endEpoch: 200, isRetrievable: false },
        {
          provider: 'pdp:3',
          state: 'active',
          dealId: 12,
          endEpoch: 96_000,
          isRetrievable: true,
          route: 'pdp',
          dataSetId: 12,
          pieceId: 0,
          lastProofEpoch: 301,
        },
      ])
    })
  })

  describe('deal transitions', () => {
    it('moves a deal along proposing → proposed → published → active → ended, each change recorded with its time', async () => {
      const { store, deal } = await fresh()
      expect(await store.markAccepted(deal.id, 'uuid-1')).toBe(true)
      expect(await store.markPublished(deal.id, 77)).toBe(true)
      expect(await store.markActive(deal.id)).toBe(true)
      expect(await store.markEnded(deal.id, 'EXPIRED')).toBe(true)
      const audit = (await store.auditOf('uuid-1'))!
      expect(audit).toMatchObject({ state: 'ended', dealId: 77, reason: 'EXPIRED', proposalEpoch: 40 })
      expect(audit.events.map((e) => [e.state, e.reason])).toEqual([
        ['proposing', undefined],
        ['proposed', undefined],
        ['published', 'deal 77'],
        ['active', undefined],
        ['ended', 'EXPIRED'],
      ])
      expect(audit.events.map((e) => e.atMs)).toEqual([...audit.events.map((e) => e.atMs)].sort((a, b) => a - b))
    })

    it('refuses moves the table does not allow, changing and recording nothing', async () => {
      const { store, deal } = await fresh()
      // A status answer that arrives after the deal failed must not bring it back.
      expect(await store.markFailed(deal.id, 'PROPOSAL_TIMEOUT')).toBe(true)
      expect(await store.markAccepted(deal.id, 'late')).toBe(false)
      expect(await store.markPublished(deal.id, 5)).toBe(false)
      expect(await store.markActive(deal.id)).toBe(false)
      const [audit] = await store.audit(1)
      expect(audit).toMatchObject({ state: 'failed', reason: 'PROPOSAL_TIMEOUT' })
      expect(audit.proposalId).toBeUndefined()
      expect(audit.events.map((e) => e.state)).toEqual(['proposing', 'failed'])
      // Skipping a step is refused too: a proposal is not active before it is published.
      const other = await fresh(2)
      expect(await other.store.markActive(other.deal.id)).toBe(false)
    })

    it('lets exactly one of two racing transitions of one deal win, and records only that one', async () => {
      const { store } = await fresh()
      for (let round = 0; round < 10; round++) {
        // Two answers for one proposal land at once: the deal keeps one UUID, and its history one acceptance.
        const { deal } = await fresh(round + 10)
        const accepted = await Promise.all([store.markAccepted(deal.id, `uuid-${round}-a`), store.markAccepted(deal.id, `uuid-${round}-b`)])
        expect(accepted.filter(Boolean)).toHaveLength(1)
        const winner = accepted[0] ? `uuid-${round}-a` : `uuid-${round}-b`
        expect((await store.get(deal.id))!.proposalId).toBe(winner)

        // An active deal slashed on chain while its retrieval check fails it: it ends one way, said once.
        await store.markPublished(deal.id, 1000 + round)
        await store.markActive(deal.id)
        const ended = await Promise.all([store.markEnded(deal.id, 'SLASHED'), store.markFailed(deal.id, 'RETRIEVAL_FAILED')])
        expect(ended.filter(Boolean)).toHaveLength(1)
        const after = (await store.auditOf(winner))!
        expect(after.state).toBe(ended[0] ? 'ended' : 'failed')
        expect(after.reason).toBe(ended[0] ? 'SLASHED' : 'RETRIEVAL_FAILED')
        expect(after.events.map((e) => e.state)).toEqual(['proposing', 'proposed', 'published', 'active', after.state])
      }
    })

    it('fails the proposals a crash interrupted, once', async () => {
      const { store, deal } = await fresh()
      expect(await store.failInterrupted()).toBe(1)
      expect(await store.failInterrupted()).toBe(0)
      expect(await store.get(deal.id)).toMatchObject({ state: 'failed', reason: 'INTERRUPTED' })
    })

    it('keeps what was sent and answered', async () => {
      const { store, deal } = await fresh()
      await store.recordSent(deal.id, { signedProposal: new Uint8Array([1, 2, 3]), proposalCid: 'bafy2bzace…', answer: 'BUSY' })
      expect((await store.audit())[0]).toMatchObject({
        signedProposal: new Uint8Array([1, 2, 3]),
        proposalCid: 'bafy2bzace…',
        providerAnswer: 'BUSY',
      })
    })

    it('shows the live deals of many groups in one view', async () => {
      const { store, deal } = await fresh(1)
      const second = await fresh(2)
      await store.markAccepted(deal.id, 'uuid-a')
      await store.markFailed(second.deal.id, 'BUSY')
      const views = await store.views([1, 2, 3])
      expect(views.get(1)).toEqual({
        deals: [{ provider: 'f01000', state: 'proposed', dealId: 0, endEpoch: 200, isRetrievable: false }],
        retrievableCopies: 0,
      })
      expect(views.has(2)).toBe(false)
      expect(await store.views()).toEqual(views)
    })

    it('lists the deals providers took and then failed, each replaced once a later deal stands in for it; refusals are no deals', async () => {
      const { store, deal } = await fresh(1)
      const propose = (provider: string) =>
        store.create({ groupId: 1, provider, pieceCid: 'baga6ea4seaq', startEpoch: 100, endEpoch: 200, tokenHash: 'h', proposalEpoch: 40 })
      // f01000 takes the deal, publishes it and never seals it; f02000, asked at the same time, refuses.
      const refused = await propose('f02000')
      await store.markAccepted(deal.id, 'uuid-1')
      await store.markPublished(deal.id, 41)
      await store.markFailed(refused.id, 'BUSY')
      await store.markFailed(deal.id, 'SEALING_FAILED')
      expect((await store.views([1])).get(1)).toEqual({
        deals: [],
        retrievableCopies: 0,
        failedDeals: [{ provider: 'f01000', dealId: 41, reason: 'SEALING_FAILED', replaced: false }],
      })
      // f03000 is asked next and takes it: it replaces the failure. Its own later failure is not replaced yet.
      const standIn = await propose('f03000')
      expect((await store.view(1)).failedDeals?.[0].replaced).toBe(false)
      await store.markAccepted(standIn.id, 'uuid-3')
      expect((await store.view(1)).failedDeals).toEqual([{ provider: 'f01000', dealId: 41, reason: 'SEALING_FAILED', replaced: true }])
      await store.markFailed(standIn.id, 'TRANSFER_FAILED')
      const view = await store.view(1)
      expect(view.deals).toEqual([])
      expect(view.failedDeals).toEqual([
        { provider: 'f01000', dealId: 41, reason: 'SEALING_FAILED', replaced: true },
        { provider: 'f03000', reason: 'TRANSFER_FAILED', replaced: false },
      ])
      expect((await store.views()).get(1)).toEqual(view)
    })
  })
})
