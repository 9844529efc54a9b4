import { afterEach, describe, expect, it } from 'vitest'
import { pdpHarness, type PdpHarness } from './harness.ts'
import { CHECK_WINDOW } from '../../../../server/gateway/deals/check.ts'

/**
 * The PDP route's verbs (funding, upload, proofs, removals; adoption after a restart in restart.test.ts), each
 * through the route's port over a fake Onchain Cloud client (fake-foc.ts):
 * milliseconds a test. The whole chain (the SDK, the simulated contracts and
 * Curio-like providers) is proved end to end by test/gateway/deals/pdp-route.test.ts.
 */
describe('the PDP route over a fake Onchain Cloud', () => {
  let h: PdpHarness
  afterEach(() => h?.close())

  const states = async (groupId = 1) => (await h.rows(groupId)).map((d) => [d.provider, d.state])
  const warnings = (text: RegExp) => h.logs.filter((l) => l.level >= 40 && text.test(l.msg))
  /** A fresh route whose group is stored on pdp:1 and pdp:2, each copy proved once. */
  const provedOnBoth = async () => {
    h = await pdpHarness()
    h.group()
    await h.pass()
    await h.settled()
    h.advance(240)
    h.foc.prove(1)
    h.foc.prove(2)
    await h.pass()
  }

  describe('upload', () => {
    it('makes one row per provider the SDK names, moved on as the SDK reports each step, and records where the copy is', async () => {
      h = await pdpHarness()
      h.group()
      await h.pass()
      await h.settled()
      const rows = await h.rows(1)
      expect(rows.map((d) => [d.provider, d.state])).toEqual([
        ['pdp:1', 'published'],
        ['pdp:2', 'published'],
      ])
      for (const d of rows) {
        expect(d.addTxHash).toMatch(/^0x[0-9a-f]{64}$/)
        expect(d).toMatchObject({ route: 'pdp', pieceId: 0, addedEpoch: 1_000 })
        expect(d.dataSetId).toBe(Number(h.foc.dataSets.get(Number(d.provider.slice(4)))))
        // Each column means one thing: a PDP copy fills no deal-market column.
        expect(d.proposalId).toBeUndefined()
        expect(d.dealId).toBeUndefined()
      }
      expect(h.foc.stores).toEqual([{ copies: 2, exclude: [] }])
    })

    it("pads a CAR under the SDK's smallest upload (127 bytes) with zeros, naming the piece by its v2 CID of that size", async () => {
      h = await pdpHarness()
      h.group(15)
      h.group(300)
      for (let i = 0; i < 2; i++) {
        await h.pass()
        await h.settled()
      }
      expect(h.foc.uploads.map((u) => u.size)).toEqual([127, 300])
      // FRC-0069: a v2 piece CID carries the payload size, so the two differ though the v1 CID is the same.
      const [small, large] = h.foc.uploads.map((u) => u.pieceCid)
      expect(small).toMatch(/^bafkzcib/)
      expect(small).not.toBe(large)
    })

    it('gives up on an upload that stalls, names the provider, and does not ask it again for a while', async () => {
      h = await pdpHarness({ uploadIdleMs: 50 })
      h.foc.plans.set(1, 'stall')
      h.group()
      await h.pass()
      await h.settled()
      expect(await states()).toEqual([['pdp:1', 'failed']])
      expect((await h.rows(1))[0].failure).toEqual({ code: 'UPLOAD_STALLED', detail: 'no progress in 0.05 s' })
      const said = h.route.progress(1, await h.rows(1))
      expect(said.steps).toEqual(['PDP provider refused: pdp:1 UPLOAD_STALLED: no progress in 0.05 s'])
      expect(said.blocked?.code).toBe('NO_PROVIDER')
      // Once the group's wait after a failed upload is over (4 epochs), it is sent to the other two.
      h.foc.plans.delete(1)
      h.advance(4)
      await h.pass()
      await h.settled()
      expect(h.foc.stores.at(-1)).toEqual({ copies: 2, exclude: [1] })
      // After the retry wait (an hour of chain time) it may be asked again.
      h.advance(121)
      expect((await h.rows(1)).filter((d) => d.state !== 'failed')).toHaveLength(2)
    })

    it('holds an Onchain Cloud RPC outage during an add against no provider: the add that went through is adopted, the other made again there', async () => {
      h = await pdpHarness()
      h.foc.plans.set(1, 'chain-down-at-add')
      h.group()
      await h.pass()
      await h.settled()
      expect((await h.rows(1)).map((d) => [d.provider, d.state, d.failure?.code])).toEqual([
        ['pdp:1', 'failed', 'CHAIN_UNREACHABLE'],
        ['pdp:2', 'failed', 'CHAIN_UNREACHABLE'],
      ])
      expect(h.route.progress(1, await h.rows(1)).steps.join('\n')).toMatch(/CHAIN_UNREACHABLE: the Onchain Cloud's RPC/)
      expect(h.route.progress(1, await h.rows(1)).steps.join('\n')).not.toMatch(/pdp:1 CHAIN/)
      h.foc.plans.delete(1)
      h.advance(4)
      await h.pass()
      await h.settled()
      // pdp:2's add landed while the SDK failed: found on chain before the upload again, not paid for twice.
      expect(h.foc.stores.at(-1)).toEqual({ copies: 1, exclude: [2] })
      expect((await h.rows(1)).filter((d) => d.state === 'published').map((d) => d.provider)).toEqual(['pdp:2', 'pdp:1'])
      expect([h.foc.piecesOf(1).length, h.foc.piecesOf(2).length]).toEqual([1, 1])
    })

    it('fails the copies a provider refused, keeps the ones made, and makes the rest on the next pass', async () => {
      h = await pdpHarness()
      h.foc.plans.set(2, { refuse: 'piece too large' })
      h.group()
      await h.pass()
      await h.settled()
      expect(await states()).toEqual([
        ['pdp:1', 'published'],
        ['pdp:2', 'failed'],
      ])
      expect((await h.rows(1))[1].failure).toEqual({ code: 'PROVIDER_REFUSED', detail: 'piece too large' })
      await h.pass()
      await h.settled()
      expect(h.foc.stores.at(-1)).toEqual({ copies: 1, exclude: [1, 2] })
      expect((await h.rows(1)).filter((d) => d.state === 'published').map((d) => d.provider)).toEqual(['pdp:1', 'pdp:3'])
    })

    it('sends no group whose CAR is larger than one upload takes, and says why no PDP copy is made of it', async () => {
      h = await pdpHarness({ maxUploadBytes: 1000 })
      h.group(1001)
      h.group(1000)
      await h.pass()
      await h.settled()
      // Only the group at the limit went; the other is not retried for ever, only said.
      expect(h.foc.uploads.map((u) => u.size)).toEqual([1000])
      await h.pass()
      expect(h.foc.uploads).toHaveLength(1)
      const said = h.route.progress(1, await h.rows(1))
      expect(said.steps).toEqual([
        "the group's CAR (1001 bytes) is larger than one Onchain Cloud upload takes (1000 bytes): no PDP copy can be made of it",
      ])
      expect(said.blocked?.code).toBe('NO_PROVIDER')
      expect(warnings(/too large for a PDP upload/)).toHaveLength(1)
    })

    it('uploads one group at a time until the account has data sets on enough providers, then two together', async () => {
      h = await pdpHarness()
      h.foc.plans.set(1, 'stall')
      h.foc.plans.set(2, 'stall')
      for (let i = 0; i < 3; i++) h.group()
      await h.pass()
      // The first upload hangs: no second one starts beside it while no data set exists.
      expect(h.foc.stores).toHaveLength(1)
      await h.settled()
      h.foc.plans.clear()
      h.advance(200)
      await h.pass()
      await h.settled()
      expect(h.foc.dataSets.size).toBe(2)
      const before = h.foc.stores.length
      await h.pass()
      await h.settled()
      expect(h.foc.stores.length - before).toBe(2)
    })
  })

  describe('funding', () => {
    it('uploads nothing while the account cannot pay, says what to deposit, and says it once however the amount moves', async () => {
      h = await pdpHarness()
      h.foc.fundingAnswer = { ready: false, depositNeeded: 30n * 10n ** 16n, needsApproval: true, ratePerEpoch: 0n }
      h.group()
      await h.pass()
      expect(h.foc.stores).toEqual([])
      // The client is asked about the copies the upload would make: both missing ones, in our data sets' metadata.
      expect(h.foc.fundingAsked.at(-1)?.request).toEqual({ copies: 2, excludeProviderIds: [], metadata: { withIPFSIndexing: '' } })
      const said = h.route.progress(1, [])
      // 0.30 USDFC asked, a tenth more for payments running while copies are made: 0.33.
      expect(said.blocked).toEqual({
        code: 'WAITING_FOR_FUNDS',
        words:
          'no funds: deposit USDFC: storing needs 0.33 USDFC more in Filecoin Pay, and the warm storage service approved, before anything is uploaded (npm run wallet -- deposit 0.33 USDFC)',
      })
      h.foc.fundingAnswer = { ...h.foc.fundingAnswer, depositNeeded: 31n * 10n ** 16n }
      await h.pass()
      expect(h.route.progress(1, []).blocked?.words).toMatch(/storing needs 0.35 USDFC more/)
      expect(h.logs.filter((l) => /^no PDP uploads/.test(l.msg))).toHaveLength(1)
      // Funded: the upload goes, and the log says so once.
      h.foc.fundingAnswer = { ready: true, depositNeeded: 0n, needsApproval: false, ratePerEpoch: 0n }
      await h.pass()
      await h.settled()
      expect(h.foc.stores).toHaveLength(1)
      expect(h.logs.filter((l) => l.msg === 'the account can pay for PDP uploads again')).toHaveLength(1)
    })

    it('deposits what is needed from the wallet when allowed, and says so when the wallet holds too little', async () => {
      h = await pdpHarness({ autoDeposit: true })
      h.foc.fundingAnswer = { ready: false, depositNeeded: 10n ** 18n, needsApproval: false, ratePerEpoch: 10n ** 12n }
      h.group()
      await h.pass()
      await h.settled()
      // 1 USDFC, a tenth more, and a day (2880 epochs) of the new rate: 1.100000002880 rounded up to cents.
      expect(h.foc.deposits).toEqual([111n * 10n ** 16n])
      expect(h.foc.stores).toHaveLength(1)

      const poor = await pdpHarness({ autoDeposit: true })
      try {
        poor.foc.walletUsdfc = 0n
        poor.foc.fundingAnswer = { ready: false, depositNeeded: 10n ** 18n, needsApproval: false, ratePerEpoch: 0n }
        poor.group()
        await poor.pass()
        expect(poor.foc.stores).toEqual([])
        expect(poor.route.progress(1, []).blocked?.words).toMatch(/^no funds: deposit USDFC: the wallet 0x0+aa holds 0 USDFC/)
      } finally {
        await poor.close()
      }
    })

    it('tops a short runway up to 30 days without a warning, and says each turn to WARNING or DEFICIT once when it cannot', async () => {
      h = await pdpHarness({ autoDeposit: true })
      h.group()
      await h.pass()
      await h.settled()
      expect(h.route.standing().onchainCloud).toMatchObject({ status: 'HEALTHY', funds: 10n ** 19n })
      // 10 days left at 10^12 a epoch: topped up to 30 days (less what is still available), and nothing to warn about.
      h.foc.account_ = { ...h.foc.account_, runwayEpochs: 28_800n, availableFunds: 28_800n * 10n ** 12n, lockupRatePerEpoch: 10n ** 12n }
      h.advance(10)
      await h.pass()
      expect(h.foc.deposits).toEqual([(86_400n - 28_800n) * 10n ** 12n].map((a) => ((a + 10n ** 16n - 1n) / 10n ** 16n) * 10n ** 16n))
      expect(h.route.standing().onchainCloud).toMatchObject({ status: 'HEALTHY', runwayEpochs: 86_400 })
      // The days beside the date are the 30 bought, not the 10 read before the deposit.
      expect(h.route.standing().onchainCloud?.fundedDays).toBeCloseTo(30, 1)
      expect(warnings(/deposit USDFC/)).toEqual([])
      expect(h.logs.filter((l) => /^deposited USDFC into Filecoin Pay: the PDP copies are paid for 30 more days/.test(l.msg))).toHaveLength(
        1,
      )
      // The wallet runs dry: now each turn is a warning, said once.
      h.foc.walletUsdfc = 0n
      for (let pass = 0; pass < 2; pass++) {
        h.advance(10)
        await h.pass()
      }
      expect(h.route.standing().onchainCloud?.status).toBe('WARNING')
      expect(warnings(/pays for the PDP copies for 10 more days/)).toHaveLength(1)
      h.foc.account_ = { ...h.foc.account_, availableFunds: 0n }
      h.advance(10)
      await h.pass()
      expect(h.route.standing().onchainCloud?.status).toBe('DEFICIT')
      expect(warnings(/no longer pays for the PDP copies/)).toHaveLength(1)
    })
  })

  describe('proofs', () => {
    it('counts a copy once a proof covers it, and says when the first proof is due until then', async () => {
      h = await pdpHarness()
      h.group()
      await h.pass()
      await h.settled()
      h.advance(10)
      await h.pass()
      // Added at 1000, challenged from 1220 on: 210 epochs of 30 s from now.
      expect(h.route.progress(1, await h.rows(1)).steps).toEqual([
        '2 PDP copies committed on chain; the offload waits for their first proof, due in about 2 hours',
      ])
      h.advance(230)
      h.foc.prove(1)
      h.foc.prove(2)
      await h.pass()
      expect(await states()).toEqual([
        ['pdp:1', 'active'],
        ['pdp:2', 'active'],
      ])
      expect((await h.rows(1))[0].lastProofEpoch).toBe(1_240)
      expect(h.route.progress(1, await h.rows(1)).steps).toEqual(['2 of 2 PDP copies proved'])
    })

    it("under mainnet's proving schedule (SIMFOC_PROVING=mainnet) shows a committed copy's first proof due about a day later", async () => {
      h = await pdpHarness()
      // FWSS on mainnet: a 2 880-epoch proving period (a day), its proof due in the last 60 epochs.
      h.foc.maxProvingPeriod = 2880
      h.foc.challengeWindow = 60
      h.group()
      await h.pass()
      await h.settled()
      // Committed as soon as the adds are confirmed; when the first proof is due is read from the chain next.
      const added = await h.deals.view(1)
      expect(added.deals.map((d) => d.milestone)).toEqual(['committed', 'committed'])
      expect(added.deals[0]).not.toHaveProperty('firstProofDueEpoch')
      h.advance(10)
      await h.pass()
      // Proving started with the data set at 1000: period 0 ends at 3880, its window opens at 3820, 23 h from now.
      const committed = await h.deals.view(1)
      expect(committed.deals.map((d) => [d.milestone, d.firstProofDueEpoch, d.isRetrievable])).toEqual([
        ['committed', 3_820, false],
        ['committed', 3_820, false],
      ])
      expect(h.route.progress(1, await h.rows(1)).steps).toEqual([
        '2 PDP copies committed on chain; the offload waits for their first proof, due in about 23 hours',
      ])
      // A piece added to those data sets later in period 0 is first challenged in period 1: its window opens at 6700.
      h.advance(990)
      h.group()
      await h.pass()
      await h.settled()
      h.advance(10)
      await h.pass()
      expect((await h.deals.view(2)).deals.map((d) => d.firstProofDueEpoch)).toEqual([6_700, 6_700])
      expect(h.route.progress(2, await h.rows(2)).steps).toEqual([
        '2 PDP copies committed on chain; the offload waits for their first proof, due in about 39 hours',
      ])
      // The first group's proofs land in their window: proved, and no due time any more.
      h.advance(3_830 - h.foc.epoch)
      h.foc.prove(1)
      h.foc.prove(2)
      await h.pass()
      const proved = await h.deals.view(1)
      expect(proved.deals.map((d) => [d.milestone, d.lastProofEpoch, d.firstProofDueEpoch])).toEqual([
        ['proved', 3_830, undefined],
        ['proved', 3_830, undefined],
      ])
    })

    it('fails a copy never proved in three proving periods and removes its piece, so it is not paid for', async () => {
      h = await pdpHarness()
      h.group()
      await h.pass()
      await h.settled()
      h.advance(3 * 240 + 21)
      h.foc.prove(2)
      await h.pass()
      const [never, proved] = await h.rows(1)
      expect(never.failure).toEqual({ code: 'NEVER_PROVED', detail: 'no proof in 3 proving periods since the piece was added' })
      expect(proved.state).toBe('active')
      expect(h.foc.removals).toEqual([{ dataSetId: BigInt(never.dataSetId!), pieceId: 0n }])
    })

    it('tells a missed proof at the first pass after its deadline, on the copy and for its group, and clears it when a proof comes in time', async () => {
      await provedOnBoth()
      // Proving since 1 000 in periods of 240 epochs: period 1 ends at 1 480. pdp:1 proves it at its last epoch, pdp:2 not.
      h.advance(240)
      h.foc.prove(1)
      await h.pass()
      expect((await h.deals.view(1)).deals.map((d) => d.missedProofEpoch)).toEqual([undefined, undefined])
      // The next poll, 6 epochs on: pdp:2's proof for period 1 did not come.
      h.advance(6)
      await h.pass()
      expect((await h.deals.view(1)).deals.map((d) => [d.provider, d.missedProofEpoch, d.stopsCountingEpoch])).toEqual([
        ['pdp:1', undefined, undefined],
        ['pdp:2', 1_480, 1_960],
      ])
      const progress = h.route.progress(1, await h.rows(1))
      expect(progress.missedProof).toBe(
        'the PDP copy on pdp:2 missed its proof; it stops counting in about 4 hours unless its provider proves again (another copy is made then)',
      )
      // Still counted meanwhile: no upload, nothing ended.
      expect(progress.steps).toEqual(['2 of 2 PDP copies proved'])
      expect(warnings(/missed its proof due by epoch 1480; the copy stops counting after epoch 1960/)).toHaveLength(1)
      // Said once: the next pass finds it recorded.
      h.advance(6)
      await h.pass()
      expect(warnings(/missed its proof/)).toHaveLength(1)
      // pdp:2 proves in period 2: the miss is over.
      h.advance(100)
      h.foc.prove(1)
      h.foc.prove(2)
      await h.pass()
      expect((await h.deals.view(1)).deals.map((d) => d.missedProofEpoch)).toEqual([undefined, undefined])
      expect(h.route.progress(1, await h.rows(1)).missedProof).toBeUndefined()
      expect(h.logs.filter((l) => /^PDP provider proves again/.test(l.msg))).toHaveLength(1)
      expect(await states()).toEqual([
        ['pdp:1', 'active'],
        ['pdp:2', 'active'],
      ])
    })

    it('ends a copy whose provider missed three proving periods in a row, ends its data set as the payer, and makes another', async () => {
      await provedOnBoth()
      // pdp:1 stops proving after period 0 (its proof at 1 240); pdp:2 goes on. Period 1 ends at 1 480, 2 at 1 720, 3 at 1 960.
      const period = async () => {
        h.advance(240)
        h.foc.prove(2)
        await h.pass()
      }
      await period()
      await period()
      // Missed since period 1: counted until period 3's deadline has passed without a proof.
      expect((await h.rows(1))[0]).toMatchObject({ state: 'active', missedProofEpoch: 1_480, stopsCountingEpoch: 1_960 })
      await period()
      expect(await states()).toEqual([
        ['pdp:1', 'active'],
        ['pdp:2', 'active'],
      ])
      expect(warnings(/missed its proof/)).toHaveLength(1)
      await period()
      await h.settled()
      const [ended] = await h.rows(1)
      expect(ended).toMatchObject({
        state: 'ended',
        failure: { code: 'MISSED_PROOFS', detail: '3 proving periods in a row without a proof' },
      })
      // The provider that stopped proving is not asked to remove anything: the payer terminates the data set it held only this copy in.
      expect(h.foc.removals).toEqual([])
      expect(h.foc.terminations).toEqual([BigInt(ended.dataSetId!)])
      expect(h.foc.stores.at(-1)).toEqual({ copies: 1, exclude: [1, 2] })
    })

    it('says a copy whose piece is gone, or whose data set was terminated, is no longer kept', async () => {
      h = await pdpHarness()
      h.group()
      await h.pass()
      await h.settled()
      h.foc.piecesOf(1)[0].state = 'gone'
      h.foc.pieces = h.foc.pieces.filter((p) => p.providerId !== 2)
      h.advance(10)
      await h.pass()
      expect((await h.rows(1)).map((d) => d.failure?.code)).toEqual(['DATA_SET_TERMINATED', 'DATA_SET_TERMINATED'])
    })
  })

  describe('removals', () => {
    it('tries a failed removal again with back-off (10, 20, 40 epochs), saying it once, while another copy of ours is in the data set', async () => {
      h = await pdpHarness()
      h.group()
      await h.pass()
      await h.settled()
      // A second group, added later to the same data sets: its copy on pdp:1 still waits for its first proof.
      h.advance(300)
      h.group()
      await h.pass()
      await h.settled()
      h.foc.failRemovals = 3
      h.advance(3 * 240 + 21 - 300)
      h.foc.prove(2)
      await h.pass()
      expect(h.foc.removals).toEqual([])
      const tried = () => 3 - h.foc.failRemovals
      const at = [tried()]
      for (const epochs of [9, 1, 19, 1, 39, 1]) {
        h.advance(epochs)
        await h.pass()
        at.push(tried())
      }
      expect(at).toEqual([1, 1, 2, 2, 3, 3, 3])
      expect(h.foc.removals).toHaveLength(1)
      expect(h.foc.terminations).toEqual([])
      expect(warnings(/removing a PDP copy that no longer counts failed/)).toHaveLength(1)
    })

    it('ends the data set as the payer when the provider does not remove a copy that no longer counts and no other copy of ours is there', async () => {
      h = await pdpHarness()
      h.group()
      await h.pass()
      await h.settled()
      h.foc.failRemovals = 1
      h.advance(3 * 240 + 21)
      h.foc.prove(2)
      await h.pass()
      const [never] = await h.rows(1)
      expect(never.failure?.code).toBe('NEVER_PROVED')
      expect(h.foc.removals).toEqual([])
      expect(h.foc.terminations).toEqual([BigInt(never.dataSetId!)])
      // Nothing is tried again: the data set's payments are ended (pdp:2 goes on proving meanwhile).
      for (let period = 0; period < 12; period++) {
        h.advance(240)
        h.foc.prove(2)
      }
      await h.pass()
      expect(h.foc.terminations).toHaveLength(1)
      expect(warnings(/removing a PDP copy that no longer counts failed/)).toHaveLength(0)
    })

    it('replaces a copy only after three failed retrieval checks in a row, keeps it until its replacement is proved, then ends it and removes its piece', async () => {
      await provedOnBoth()
      const [failing] = await h.rows(1)
      const stores = h.foc.stores.length
      // One or two failed checks are no evidence yet: no upload, nothing paid for twice.
      for (let i = 0; i < 2; i++) {
        await h.deals.recordCheck(failing.id, 'failed', { inARow: 3, ...CHECK_WINDOW })
        await h.pass()
        await h.settled()
      }
      expect(h.foc.stores).toHaveLength(stores)
      await h.deals.recordCheck(failing.id, 'failed', { inARow: 3, ...CHECK_WINDOW })
      await h.pass()
      await h.settled()
      expect(h.foc.stores.at(-1)).toEqual({ copies: 1, exclude: [1, 2] })
      // The replacement is added, not yet proved: the failing copy stays, and is paid for.
      expect(await states()).toEqual([
        ['pdp:1', 'active'],
        ['pdp:2', 'active'],
        ['pdp:3', 'published'],
      ])
      expect(h.foc.removals).toEqual([])
      h.advance(240)
      h.foc.prove(2)
      h.foc.prove(3)
      await h.pass()
      expect(await states()).toEqual([
        ['pdp:1', 'ended'],
        ['pdp:2', 'active'],
        ['pdp:3', 'active'],
      ])
      expect((await h.rows(1))[0].failure?.code).toBe('RETRIEVAL_FAILED')
      expect(h.foc.removals).toEqual([{ dataSetId: BigInt(failing.dataSetId!), pieceId: 0n }])
      expect(h.foc.terminations).toEqual([])
    })
  })

  it('blames an Onchain Cloud RPC outage on nobody: no copy fails, and the next pass goes on', async () => {
    h = await pdpHarness()
    h.group()
    await h.pass()
    await h.settled()
    h.foc.chainDown = true
    h.advance(10)
    // The pass ends where the chain stopped answering, and the group says what it waits for.
    await h.pass()
    expect(h.route.progress(1, await h.rows(1)).steps).toContain(
      "waiting for the Onchain Cloud's chain: the Onchain Cloud's RPC (http://127.0.0.1:1235) did not answer: connect ECONNREFUSED 127.0.0.1:1235",
    )
    h.foc.chainDown = false
    h.advance(240)
    h.foc.prove(1)
    h.foc.prove(2)
    await h.pass()
    expect(await states()).toEqual([
      ['pdp:1', 'active'],
      ['pdp:2', 'active'],
    ])
  })
})
