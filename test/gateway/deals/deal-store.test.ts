import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createDealStore } from '../../../server/gateway/deals/deal-store.ts'
import { DEAL_STEPS } from '../../../server/gateway/deals/schema.ts'
import { migrateSql } from '../../../server/shared/sql/index.ts'
import type { DealStore } from '../../../server/gateway/deals/types.ts'
import { CHECK_WINDOW } from '../../../server/gateway/deals/check.ts'
import type { Sql } from '../../../server/shared/sql/index.ts'
import { describeEachStore } from '../../helpers/stores.ts'

/** Three failures in a row, or five among the last 20 checks, as the gateway runs by default. */
const RULE = { inARow: 3, ...CHECK_WINDOW }

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
      route: 'market',
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
        route: 'market',
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
      await store.markProposed(copy.id, { addTxHash: '0xadd' })
      await store.markPublished(copy.id, { dataSetId: 12 })
      await store.recordPdpCopy(copy.id, { dataSetId: 12, pieceId: 0, addedEpoch: 61, retrievalUrl: 'http://127.0.0.1:9/piece/bafkzcib' })
      await store.recordProof(copy.id, { endEpoch: 90_000, firstProofDueEpoch: 2_941 })
      // Committed: on chain, its first proof due when its data set's challenge window opens.
      expect((await store.view(1)).deals[1]).toMatchObject({ state: 'published', milestone: 'committed', firstProofDueEpoch: 2_941 })
      await store.markActive(copy.id)
      await store.recordProof(copy.id, { lastProofEpoch: 301, endEpoch: 95_000 })
      // A later poll without a new proof keeps the last one.
      await store.recordProof(copy.id, { endEpoch: 96_000 })
      await store.recordCheck(copy.id, 'passed')
      expect(await store.get(copy.id)).toMatchObject({
        dataSetId: 12,
        pieceId: 0,
        addedEpoch: 61,
        retrievalUrl: 'http://127.0.0.1:9/piece/bafkzcib',
        lastProofEpoch: 301,
        endEpoch: 96_000,
        addTxHash: '0xadd',
      })
      // Each column means one thing: a PDP copy has no deal id or deal UUID.
      expect(await store.get(copy.id)).not.toHaveProperty('dealId')
      expect(await store.get(copy.id)).not.toHaveProperty('proposalId')
      await store.markProposed(deal.id, { proposalId: 'uuid' })
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
          milestone: 'proved',
        },
      ])
      expect(await store.get(copy.id)).not.toHaveProperty('firstProofDueEpoch')
    })

    it("keeps a proved copy's missed proof across a reopened store, shows it, and clears it once a proof comes in time", async () => {
      // A store from before missed proofs were kept: its copies read as proving until the chain is read again.
      await migrateSql(sql, 'gateway.deals', DEAL_STEPS.slice(0, -1))
      await sql.run(
        `INSERT INTO group_deals (group_id, route, provider, piece_cid, state, data_set_id, piece_id, start_epoch, end_epoch, created_ms, updated_ms)
           VALUES (1, 'pdp', 'pdp:3', 'bafkzcib', 'active', 12, 0, 50, 90000, 0, 0)`,
      )
      const store = await createDealStore(sql)
      const [copy] = await store.ofGroup(1)
      expect(copy).not.toHaveProperty('missedProofEpoch')
      await store.recordProof(copy.id, { endEpoch: 90_000, missed: { missedProofEpoch: 1_480, stopsCountingEpoch: 1_960 } })
      const reopened = await createDealStore(sql)
      expect(await reopened.get(copy.id)).toMatchObject({ missedProofEpoch: 1_480, stopsCountingEpoch: 1_960 })
      expect((await reopened.view(1)).deals[0]).toMatchObject({ milestone: 'proved', missedProofEpoch: 1_480, stopsCountingEpoch: 1_960 })
      await reopened.recordProof(copy.id, { lastProofEpoch: 1_700, endEpoch: 90_000 })
      expect(await reopened.get(copy.id)).not.toHaveProperty('missedProofEpoch')
      expect((await reopened.view(1)).deals[0]).not.toHaveProperty('stopsCountingEpoch')
    })
  })

  describe('deal transitions', () => {
    it('moves a deal along proposing → proposed → published → active → ended, each change recorded with its time', async () => {
      const { store, deal } = await fresh()
      expect(await store.markProposed(deal.id, { proposalId: 'uuid-1' })).toBe(true)
      expect(await store.markPublished(deal.id, { dealId: 77 })).toBe(true)
      expect(await store.markActive(deal.id)).toBe(true)
      expect(await store.markEnded(deal.id, { code: 'EXPIRED' })).toBe(true)
      const audit = (await store.auditOf('uuid-1'))!
      expect(audit).toMatchObject({ state: 'ended', dealId: 77, failure: { code: 'EXPIRED' }, proposalEpoch: 40 })
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
      expect(await store.markFailed(deal.id, { code: 'PROPOSAL_TIMEOUT' })).toBe(true)
      expect(await store.markProposed(deal.id, { proposalId: 'late' })).toBe(false)
      expect(await store.markPublished(deal.id, { dealId: 5 })).toBe(false)
      expect(await store.markActive(deal.id)).toBe(false)
      const [audit] = await store.audit(1)
      expect(audit).toMatchObject({ state: 'failed', failure: { code: 'PROPOSAL_TIMEOUT' } })
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
        const accepted = await Promise.all([
          store.markProposed(deal.id, { proposalId: `uuid-${round}-a` }),
          store.markProposed(deal.id, { proposalId: `uuid-${round}-b` }),
        ])
        expect(accepted.filter(Boolean)).toHaveLength(1)
        const winner = accepted[0] ? `uuid-${round}-a` : `uuid-${round}-b`
        expect((await store.get(deal.id))!.proposalId).toBe(winner)

        // An active deal slashed on chain while its retrieval check fails it: it ends one way, said once.
        await store.markPublished(deal.id, { dealId: 1000 + round })
        await store.markActive(deal.id)
        const ended = await Promise.all([
          store.markEnded(deal.id, { code: 'SLASHED' }),
          store.markFailed(deal.id, { code: 'PIECE_REMOVED' }),
        ])
        expect(ended.filter(Boolean)).toHaveLength(1)
        const after = (await store.auditOf(winner))!
        expect(after.state).toBe(ended[0] ? 'ended' : 'failed')
        expect(after.failure).toEqual({ code: ended[0] ? 'SLASHED' : 'PIECE_REMOVED' })
        expect(after.events.map((e) => e.state)).toEqual(['proposing', 'proposed', 'published', 'active', after.state])
      }
    })

    it('fails the proposals a crash interrupted, once, and leaves PDP copies to their route, which looks on chain', async () => {
      const { store, deal } = await fresh()
      const pdp = await store.create({
        groupId: 1,
        route: 'pdp',
        provider: 'pdp:1',
        pieceCid: 'bafkzcib',
        startEpoch: 1,
        endEpoch: 1,
        proposalEpoch: 1,
      })
      expect(await store.failInterrupted()).toBe(1)
      expect(await store.failInterrupted()).toBe(0)
      expect(await store.get(deal.id)).toMatchObject({ state: 'failed', failure: { code: 'INTERRUPTED' } })
      expect((await store.get(pdp.id))?.state).toBe('proposing')
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
      await store.markProposed(deal.id, { proposalId: 'uuid-a' })
      await store.markFailed(second.deal.id, { code: 'PROVIDER_DECLINED', detail: 'BUSY' })
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
        store.create({
          groupId: 1,
          route: 'market',
          provider,
          pieceCid: 'baga6ea4seaq',
          startEpoch: 100,
          endEpoch: 200,
          tokenHash: 'h',
          proposalEpoch: 40,
        })
      // f01000 takes the deal, publishes it and never seals it; f02000, asked at the same time, refuses.
      const refused = await propose('f02000')
      await store.markProposed(deal.id, { proposalId: 'uuid-1' })
      await store.markPublished(deal.id, { dealId: 41 })
      await store.markFailed(refused.id, { code: 'PROVIDER_DECLINED', detail: 'BUSY' })
      await store.markFailed(deal.id, { code: 'PROVIDER_FAILED', detail: 'SEALING_FAILED' })
      expect((await store.views([1])).get(1)).toEqual({
        deals: [],
        retrievableCopies: 0,
        failedDeals: [{ provider: 'f01000', dealId: 41, reason: 'SEALING_FAILED', reasonCode: 'PROVIDER_FAILED', replaced: false }],
      })
      // f03000 is asked next and takes it: it replaces the failure. Its own later failure is not replaced yet.
      const standIn = await propose('f03000')
      expect((await store.view(1)).failedDeals?.[0].replaced).toBe(false)
      await store.markProposed(standIn.id, { proposalId: 'uuid-3' })
      expect((await store.view(1)).failedDeals).toEqual([
        { provider: 'f01000', dealId: 41, reason: 'SEALING_FAILED', reasonCode: 'PROVIDER_FAILED', replaced: true },
      ])
      await store.markFailed(standIn.id, { code: 'PROVIDER_FAILED', detail: 'TRANSFER_FAILED' })
      const view = await store.view(1)
      expect(view.deals).toEqual([])
      expect(view.failedDeals).toEqual([
        { provider: 'f01000', dealId: 41, reason: 'SEALING_FAILED', reasonCode: 'PROVIDER_FAILED', replaced: true },
        { provider: 'f03000', reason: 'TRANSFER_FAILED', reasonCode: 'PROVIDER_FAILED', replaced: false },
      ])
      expect((await store.views()).get(1)).toEqual(view)
    })
  })

  describe('retrieval checks', () => {
    it('stops counting a copy only at the third failed check in a row; a round that blamed no one changes nothing; a pass forgives', async () => {
      const { store, deal } = await fresh()
      await store.markProposed(deal.id, { proposalId: 'u' })
      await store.markPublished(deal.id, { dealId: 5 })
      await store.markActive(deal.id)
      await store.recordCheck(deal.id, 'passed')
      await store.recordCheck(deal.id, 'failed', RULE)
      await store.recordCheck(deal.id, 'failed', RULE)
      // Nothing answered that round: the copy is as it was, only its check time moves on.
      const before = (await store.get(deal.id))!
      await store.recordCheck(deal.id, 'unsure')
      const unsure = (await store.get(deal.id))!
      expect(unsure).toMatchObject({ retrievable: false, failedChecks: 2 })
      expect(unsure).not.toHaveProperty('checkFailedMs')
      expect(unsure.checkedMs).toBeGreaterThan(before.checkedMs!)
      await store.recordCheck(deal.id, 'failed', RULE)
      const lost = (await store.get(deal.id))!
      expect(lost).toMatchObject({ failedChecks: 3, checkFailedMs: lost.checkedMs })
      // Later failures keep when it stopped counting.
      await store.recordCheck(deal.id, 'failed', RULE)
      expect(await store.get(deal.id)).toMatchObject({ failedChecks: 4, checkFailedMs: lost.checkedMs })
      await store.recordCheck(deal.id, 'passed')
      const back = (await store.get(deal.id))!
      expect(back.retrievable).toBe(true)
      expect(back).not.toHaveProperty('failedChecks')
      expect(back).not.toHaveProperty('checkFailedMs')
    })

    it('stops counting a copy that fails a quarter of its last 20 checks, never three in a row, until passes bring it below', async () => {
      const { store, deal } = await fresh()
      await store.markProposed(deal.id, { proposalId: 'u' })
      await store.markPublished(deal.id, { dealId: 5 })
      await store.markActive(deal.id)
      const check = (result: 'passed' | 'failed') => store.recordCheck(deal.id, result, RULE)
      // One failure in five: 4 of the last 20, it keeps counting however long it goes on.
      for (let i = 1; i <= 40; i++) await check(i % 5 === 0 ? 'failed' : 'passed')
      expect(await store.get(deal.id)).not.toHaveProperty('checkFailedMs')
      for (let i = 1; i <= 20; i++) await check('passed')
      // One in four: never two in a row, but the fifth failure among the last 20 stops it.
      const standings = []
      for (let i = 1; i <= 20; i++) standings.push(await check(i % 4 === 0 ? 'failed' : 'passed'))
      expect(standings.map((x) => x?.stoppedNow)).toEqual([...Array(19).fill(false), true])
      expect(standings.at(-1)).toMatchObject({ inARow: 1, failedInWindow: 5, checks: 20 })
      const stopped = (await store.get(deal.id))!
      expect(stopped).toMatchObject({ failedChecks: 1, checkFailedMs: stopped.checkedMs })
      // Passes while the window still holds five failures do not make it count again; the one that drops the
      // oldest failure out of the window does.
      for (let i = 1; i <= 3; i++) {
        await check('passed')
        expect(await store.get(deal.id)).toMatchObject({ retrievable: true, checkFailedMs: stopped.checkedMs })
      }
      expect(await check('passed')).toMatchObject({ failedInWindow: 4 })
      expect(await store.get(deal.id)).not.toHaveProperty('checkFailedMs')
    })

    it('keeps, across the upgrade, the verdict on a copy that had stopped counting on one failed check', async () => {
      // The store before failed checks were counted (the step before it).
      const before = DEAL_STEPS.findIndex((step) => typeof step === 'string' && step.includes('ADD COLUMN failed_checks'))
      await migrateSql(sql, 'gateway.deals', DEAL_STEPS.slice(0, before))
      const row = (retrievable: number, checked: string) =>
        sql.run(
          `INSERT INTO group_deals (group_id, provider, piece_cid, start_epoch, end_epoch, created_ms, updated_ms, state, retrievable, checked_ms) VALUES (1, 'f01000', 'baga', 1, 2, 0, 0, 'active', ${retrievable}, ${checked})`,
        )
      await row(0, '500')
      await row(1, '600')
      await row(0, 'NULL')
      const [failed, passed, unchecked] = await (await createDealStore(sql)).ofGroup(1)
      expect(failed).toMatchObject({ failedChecks: 1, checkFailedMs: 500 })
      for (const d of [passed, unchecked]) expect(d).not.toHaveProperty('checkFailedMs')
    })
  })

  describe('records made before each column meant one thing', () => {
    it("moves a PDP copy's add transaction and data set out of the deal columns, and splits every reason into its code and detail", async () => {
      // The store as it was: four steps, PDP copies keeping their add transaction in proposal_id and their data set in
      // deal_id, reasons as one string.
      await migrateSql(sql, 'gateway.deals', DEAL_STEPS.slice(0, 4))
      const row = (fields: string, values: string) =>
        sql.run(
          `INSERT INTO group_deals (group_id, provider, piece_cid, start_epoch, end_epoch, created_ms, updated_ms, ${fields}) VALUES (1, 'f01000', 'baga', 1, 2, 0, 0, ${values})`,
        )
      await row('route, state, proposal_id, deal_id, data_set_id, piece_id', `'pdp', 'active', '0xabc', 7, 7, 3`)
      await row('route, state, proposal_id, deal_id', `'pdp', 'published', '0xdef', 8`)
      await row(
        'route, state, proposal_id, deal_id, data_set_id, piece_id, reason',
        `'pdp', 'ended', 'pdp-7-3', 7, 7, 3, 'MISSED_PROOFS: 2 proving periods in a row without a proof'`,
      )
      await row('state, reason', `'failed', 'PROPOSAL_TIMEOUT'`)
      await row('state, reason', `'failed', 'CHAIN_DEAL_MISMATCH: deal 9 on chain has piece bagb, not what was signed'`)
      await row('state, reason', `'failed', 'BUSY'`)
      await row('state, proposal_id, deal_id, reason', `'failed', 'uuid', 41, 'SEALING_FAILED'`)
      await row('state, proposal_id, reason', `'failed', 'uuid-2', 'failed to fetch: connection reset: by peer'`)
      const store = await createDealStore(sql)
      const [active, published, missed, timeout, mismatch, declined, sealing, fetching] = await store.ofGroup(1)
      expect(active).toMatchObject({ route: 'pdp', addTxHash: '0xabc', dataSetId: 7, pieceId: 3 })
      expect(published).toMatchObject({ addTxHash: '0xdef', dataSetId: 8 })
      for (const d of [active, published, missed]) {
        expect(d).not.toHaveProperty('proposalId')
        expect(d).not.toHaveProperty('dealId')
      }
      expect(missed.failure).toEqual({ code: 'MISSED_PROOFS', detail: '2 proving periods in a row without a proof' })
      expect(timeout.failure).toEqual({ code: 'PROPOSAL_TIMEOUT' })
      expect(mismatch.failure).toEqual({ code: 'CHAIN_DEAL_MISMATCH', detail: 'deal 9 on chain has piece bagb, not what was signed' })
      // A provider's own words: a refusal of the proposal (never accepted), or a failure it reported after taking it.
      expect(declined.failure).toEqual({ code: 'PROVIDER_DECLINED', detail: 'BUSY' })
      expect(sealing).toMatchObject({ proposalId: 'uuid', dealId: 41, failure: { code: 'PROVIDER_FAILED', detail: 'SEALING_FAILED' } })
      expect(fetching.failure).toEqual({ code: 'PROVIDER_FAILED', detail: 'failed to fetch: connection reset: by peer' })
      // What /file-info says of them reads as before.
      expect(missed).toMatchObject({ state: 'ended', dataSetId: 7, pieceId: 3 })
      expect((await store.view(1)).failedDeals?.map((f) => [f.reason, f.reasonCode])).toEqual([
        ['SEALING_FAILED', 'PROVIDER_FAILED'],
        ['failed to fetch: connection reset: by peer', 'PROVIDER_FAILED'],
      ])
    })

    it('reads a failure code a newer gateway wrote as UNKNOWN, its words kept', async () => {
      const { store, deal } = await fresh()
      await store.markFailed(deal.id, { code: 'PROVIDER_FAILED', detail: 'x' })
      await sql.run(`UPDATE group_deals SET reason_code = 'SOMETHING_NEW', reason = 'its words' WHERE id = ?`, [deal.id])
      expect((await store.get(deal.id))!.failure).toEqual({ code: 'UNKNOWN', detail: 'SOMETHING_NEW: its words' })
    })
  })
})
