import * as Abis from '@filoz/synapse-core/abis'
import * as Pay from '@filoz/synapse-core/pay'
import * as PdpVerifier from '@filoz/synapse-core/pdp-verifier'
import * as Piece from '@filoz/synapse-core/piece'
import * as SessionKey from '@filoz/synapse-core/session-key'
import * as SpRegistry from '@filoz/synapse-core/sp-registry'
import * as TypedData from '@filoz/synapse-core/typed-data'
import * as WarmStorage from '@filoz/synapse-core/warm-storage'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bytesToHex, parseEventLogs, parseUnits, zeroAddress, type Address, type Hex, type TransactionReceipt } from 'viem'
import { buildPieceTree, type PieceTree } from './commp-tree.ts'
import {
  challengedLeaves,
  GENESIS,
  locate,
  missingFromAbi,
  pdpWithListenerErrors,
  proofsFor,
  revertOf,
  startFoc,
  testBytes,
  type Foc,
  type SdkClient,
} from './pdp-fixture.ts'

// FilecoinWarmStorageService and its view on the simulated chain, driven as the SDK and a
// provider drive them: the payer's authorisations are signed by the SDK's own typed-data
// functions, the provider calls PDPVerifier, and the SDK's read functions read the result.
const USDFC = (amount: string) => parseUnits(amount, 18)
const MAX_PROVING_PERIOD = 240n
const CHALLENGE_WINDOW = 20n
const FLOOR_RATE = USDFC('0.06') / 86_400n // the monthly floor per epoch: every small data set pays it

describe('simulated FilecoinWarmStorageService', () => {
  let foc: Foc
  let sp: SdkClient // the provider's operator key: sends PDPVerifier's transactions
  let payee: SdkClient // where the provider is paid
  let payer: SdkClient
  let mallory: SdkClient
  let providerId: bigint
  let pdp: Address
  let fwss: Address
  const dataSetId = 1n
  const clientDataSetId = 7001n
  let info: { pdpRailId: bigint }
  const pieces: { tree: PieceTree; data: Uint8Array; metadata: { key: string; value: string }[] }[] = [
    { data: testBytes(2000, 21), tree: buildPieceTree(testBytes(2000, 21)), metadata: [{ key: 'name', value: 'hello.txt' }] },
    { data: testBytes(500, 22), tree: buildPieceTree(testBytes(500, 22)), metadata: [] },
  ]
  let activation = 0n
  let deadline = 0n

  const pdpSend = (functionName: string, args: unknown[], value?: bigint) =>
    foc.send(sp, pdp, pdpWithListenerErrors, functionName, args, value)
  const fwssEvents = (receipt: TransactionReceipt) => parseEventLogs({ abi: Abis.fwss, logs: receipt.logs })
  const view = <T>(functionName: string, args: unknown[]) =>
    foc.publicClient.readContract({ address: foc.addresses.fwssView, abi: Abis.fwssView, functionName, args } as never) as Promise<T>
  const payAccount = (address: Address) => Pay.accounts(foc.publicClient, { address })

  /** Five challenges (FWSS's CHALLENGES_PER_PROOF) answered from the pieces' trees. */
  async function proveNow(count = 5): Promise<TransactionReceipt> {
    const challengeEpoch = (await PdpVerifier.getNextChallengeEpoch(foc.publicClient, { dataSetId }))!
    const seed = await foc.publicClient.readContract({ address: pdp, abi: Abis.pdp, functionName: 'getRandomness', args: [challengeEpoch] })
    const range = await foc.publicClient.readContract({ address: pdp, abi: Abis.pdp, functionName: 'getChallengeRange', args: [dataSetId] })
    const at = challengedLeaves(seed, dataSetId, count, range).map((leaf) =>
      locate(
        leaf,
        pieces.map((p) => BigInt(p.tree.dataLeaves)),
      ),
    )
    const proofs = proofsFor(at, new Map(pieces.map((p, i) => [BigInt(i), p.tree])))
    return pdpSend('provePossession', [dataSetId, proofs], USDFC('0.001'))
  }

  beforeAll(async () => {
    foc = await startFoc()
    foc.setEpoch(1000)
    pdp = foc.addresses.pdp
    fwss = foc.addresses.fwss
    sp = await foc.wallet('provider')
    payee = await foc.wallet('provider payee')
    payer = await foc.wallet('client')
    mallory = await foc.wallet('mallory')

    // the provider registers (the SDK's own call) and the service's owner approves it
    const { event } = await SpRegistry.registerProviderSync(sp, {
      payee: payee.account.address,
      name: 'sim-pdp-1',
      description: 'simulated Curio PDP provider',
      pdpOffering: {
        serviceURL: 'http://127.0.0.1:1/',
        minPieceSizeInBytes: 127n,
        maxPieceSizeInBytes: 1n << 30n,
        storagePricePerTibPerDay: USDFC('0.1'),
        minProvingPeriodInEpochs: MAX_PROVING_PERIOD,
        location: 'loopback',
        paymentTokenAddress: foc.addresses.usdfc,
        ipniPiece: false,
        ipniIpfs: false,
      },
    })
    providerId = event.args.providerId
    await WarmStorage.addApprovedProviderSync(foc.deployer, { providerId })

    // the client funds Filecoin Pay and approves the service as its operator, as the SDK does
    await foc.mint(payer.account.address, USDFC('100'))
    await Pay.fundSync(payer, { amount: USDFC('20') })
  }, 120_000)
  afterAll(() => foc?.close())

  it('has every function and event of the SDK’s FWSS and view ABIs, with the same types, but the proxy upgrades', () => {
    // two events the real service declares but never emits (its provider changes and CDN rails end otherwise)
    const unused = ['CDNPaymentTerminated', 'DataSetServiceProviderChanged']
    expect(missingFromAbi(Abis.generated.filecoinWarmStorageServiceAbi, foc.artifacts.FilecoinWarmStorageService.abi, unused)).toEqual([])
    expect(missingFromAbi(Abis.fwssView, foc.artifacts.FilecoinWarmStorageServiceStateView.abi)).toEqual([])
  })

  it('answers the SDK’s address, pricing, provider and EIP-712 domain reads', async () => {
    expect(await WarmStorage.readAddresses(foc.publicClient, { contractAddress: fwss })).toMatchObject({
      payments: foc.addresses.filecoinPay,
      warmStorageView: foc.addresses.fwssView,
      pdpVerifier: pdp,
      serviceProviderRegistry: foc.addresses.serviceProviderRegistry,
      sessionKeyRegistry: foc.addresses.sessionKeyRegistry,
      usdfcToken: foc.addresses.usdfc,
    })
    expect(await WarmStorage.getServicePrice(foc.publicClient)).toEqual({
      pricePerTiBPerMonthNoCDN: USDFC('2.5'),
      pricePerTiBCdnEgress: USDFC('7'),
      pricePerTiBCacheMissEgress: USDFC('7'),
      tokenAddress: foc.addresses.usdfc,
      epochsPerMonth: 86_400n,
      minimumPricePerMonth: USDFC('0.06'),
    })
    expect(await WarmStorage.getApprovedProviderIds(foc.publicClient)).toEqual([providerId])
    expect(await view('isProviderApproved', [providerId])).toBe(true)
    expect(await view('getPDPConfig', [])).toEqual([
      MAX_PROVING_PERIOD,
      CHALLENGE_WINDOW,
      5n,
      BigInt(foc.epoch()) + MAX_PROVING_PERIOD - CHALLENGE_WINDOW,
    ])

    // the domain the contract hashes with is the one the SDK signs with
    const [fields, name, version, chainId, verifyingContract, salt, extensions] = await foc.publicClient.readContract({
      address: fwss,
      abi: Abis.fwss,
      functionName: 'eip712Domain',
    })
    expect({ name, version, chainId: Number(chainId), verifyingContract }).toEqual(TypedData.getStorageDomain({ chain: foc.chain }))
    expect([fields, salt, extensions]).toEqual(['0x0f', `0x${'00'.repeat(32)}`, []])
  })

  it('refuses to create a data set on a signature that is not the payer’s, with the real contract’s InvalidSignature', async () => {
    const payeeAddress = payee.account.address
    const forged = await TypedData.signCreateDataSet(mallory, { clientDataSetId, payee: payeeAddress, payer: payer.account.address })
    expect(await revertOf(pdpSend('createDataSet', [fwss, forged]))).toEqual({
      errorName: 'InvalidSignature',
      args: [payer.account.address, mallory.account.address],
    })
    // signed by the payer, but for another payee than the provider's registered one
    const otherPayee = await TypedData.signCreateDataSet(payer, { clientDataSetId, payee: mallory.account.address })
    const refused = await revertOf(pdpSend('createDataSet', [fwss, otherPayee]))
    expect(refused.errorName).toBe('InvalidSignature')
    expect(refused.args?.[0]).toBe(payer.account.address)
    expect(refused.args?.[1]).not.toBe(payer.account.address)
    expect(await view('getClientDataSetsLength', [payer.account.address])).toBe(0n)
  })

  it('creates a data set from the SDK’s CreateDataSet signature: PDP rail, 0.1 USDFC sybil fee into Filecoin Pay, metadata', async () => {
    const extraData = await TypedData.signCreateDataSet(payer, {
      clientDataSetId,
      payee: payee.account.address,
      metadata: [
        { key: 'source', value: 'nextcloud' },
        { key: 'group', value: 'a'.repeat(100) },
      ],
    })
    const payBefore = (await payAccount(foc.addresses.filecoinPay)).funds
    const payerBefore = (await payAccount(payer.account.address)).funds
    const filBefore = await foc.publicClient.getBalance({ address: sp.account.address })
    // FIL sent along comes back: the fee was paid in USDFC
    const receipt = await pdpSend('createDataSet', [fwss, extraData], USDFC('1'))
    const gas = receipt.gasUsed * receipt.effectiveGasPrice
    expect(await foc.publicClient.getBalance({ address: sp.account.address })).toBe(filBefore - gas)
    expect((await payAccount(foc.addresses.filecoinPay)).funds).toBe(payBefore + USDFC('0.1'))
    expect((await payAccount(payer.account.address)).funds).toBe(payerBefore - USDFC('0.1'))

    const created = fwssEvents(receipt).find((e) => e.eventName === 'DataSetCreated')
    expect(created?.args).toMatchObject({
      dataSetId,
      providerId,
      cacheMissRailId: 0n,
      cdnRailId: 0n,
      payer: payer.account.address,
      serviceProvider: sp.account.address,
      payee: payee.account.address,
      metadataKeys: ['source', 'group'],
      metadataValues: ['nextcloud', 'a'.repeat(100)],
    })

    // the SDK's reads of what was written
    const dataSet = await WarmStorage.getDataSet(foc.publicClient, { dataSetId })
    expect(dataSet).toMatchObject({
      dataSetId,
      providerId,
      payer: payer.account.address,
      payee: payee.account.address,
      serviceProvider: sp.account.address,
      clientDataSetId,
      pdpEndEpoch: 0n,
      cacheMissRailId: 0n,
      cdnRailId: 0n,
      commissionBps: 0n,
    })
    info = { pdpRailId: dataSet!.pdpRailId }
    expect(await WarmStorage.getClientDataSets(foc.publicClient, { address: payer.account.address })).toEqual([dataSet])
    expect(await WarmStorage.getClientDataSetsLength(foc.publicClient, { address: payer.account.address })).toBe(1n)
    expect(await WarmStorage.getAllDataSetMetadata(foc.publicClient, { dataSetId })).toEqual({
      source: 'nextcloud',
      group: 'a'.repeat(100),
    })
    expect(await view('getDataSetMetadata', [dataSetId, 'group'])).toEqual([true, 'a'.repeat(100)])
    expect(await view('getDataSetMetadata', [dataSetId, 'withCDN'])).toEqual([false, ''])
    expect(await view('railToDataSet', [info.pdpRailId])).toBe(dataSetId)
    expect(await view('clientNonces', [payer.account.address, clientDataSetId])).toBe(dataSetId)
    expect(await view('getDataSetStatus', [dataSetId])).toBe(0) // no proving yet

    const rail = await Pay.getRail(foc.publicClient, { railId: info.pdpRailId })
    expect(rail).toMatchObject({
      from: payer.account.address,
      to: payee.account.address,
      operator: fwss,
      validator: fwss,
      paymentRate: 0n,
      lockupPeriod: 86_400n,
    })

    const pdpDataSet = await WarmStorage.getPdpDataSet(foc.publicClient, { dataSetId })
    expect(pdpDataSet).toMatchObject({ live: true, managed: true, cdn: false, activePieceCount: 0n, metadata: { source: 'nextcloud' } })
    expect(pdpDataSet?.provider.id).toBe(providerId)
    expect(await PdpVerifier.getDataSetListener(foc.publicClient, { dataSetId })).toBe(fwss)
  })

  it('refuses a second data set under the same clientDataSetId', async () => {
    const again = await TypedData.signCreateDataSet(payer, { clientDataSetId, payee: payee.account.address })
    expect(await revertOf(pdpSend('createDataSet', [fwss, again]))).toEqual({
      errorName: 'ClientDataSetAlreadyRegistered',
      args: [clientDataSetId],
    })
  })

  it('adds pieces on the SDK’s AddPieces signature, stores their metadata and starts the rail at the floor rate', async () => {
    const signed = await TypedData.signAddPieces(payer, {
      clientDataSetId,
      nonce: 1n,
      pieces: pieces.map((p) => ({ pieceCid: Piece.calculate(p.data), metadata: p.metadata })),
    })
    // a forged one first
    const forged = await TypedData.signAddPieces(mallory, {
      clientDataSetId,
      nonce: 2n,
      pieces: pieces.map((p) => ({ pieceCid: Piece.calculate(p.data) })),
    })
    const cids = pieces.map((p) => ({ data: p.tree.cidHex }))
    expect(await revertOf(pdpSend('addPieces', [dataSetId, zeroAddress, cids, forged]))).toEqual({
      errorName: 'InvalidSignature',
      args: [payer.account.address, mallory.account.address],
    })
    // the payer's signature does not cover other pieces
    expect((await revertOf(pdpSend('addPieces', [dataSetId, zeroAddress, [...cids].reverse(), signed]))).errorName).toBe('InvalidSignature')

    const receipt = await pdpSend('addPieces', [dataSetId, zeroAddress, cids, signed])
    const events = fwssEvents(receipt)
    expect(events.filter((e) => e.eventName === 'PieceAdded').map((e) => e.args)).toEqual([
      { dataSetId, pieceId: 0n, pieceCid: cids[0], keys: ['name'], values: ['hello.txt'] },
      { dataSetId, pieceId: 1n, pieceCid: cids[1], keys: [], values: [] },
    ])
    expect(events.find((e) => e.eventName === 'RailRateUpdated')?.args).toEqual({ dataSetId, railId: info.pdpRailId, newRate: FLOOR_RATE })
    expect((await Pay.getRail(foc.publicClient, { railId: info.pdpRailId })).paymentRate).toBe(FLOOR_RATE)

    expect(await WarmStorage.getAllPieceMetadata(foc.publicClient, { dataSetId, pieceId: 0n })).toEqual({ name: 'hello.txt' })
    expect(await WarmStorage.getAllPieceMetadata(foc.publicClient, { dataSetId, pieceId: 1n })).toEqual({})
    expect(await view('getPieceMetadata', [dataSetId, 0n, 'name'])).toEqual([true, 'hello.txt'])
    const active = await PdpVerifier.getActivePieces(foc.publicClient, { dataSetId })
    expect(active.pieces.map((p) => p.cid.toString())).toEqual(pieces.map((p) => Piece.calculate(p.data).toString()))
    // the nonce is spent: the same authorisation cannot add the pieces twice
    expect(await revertOf(pdpSend('addPieces', [dataSetId, zeroAddress, cids, signed]))).toEqual({
      errorName: 'ClientDataSetAlreadyRegistered',
      args: [1n],
    })
    expect(await view('clientNonces', [payer.account.address, 1n])).toBe((2n << 128n) | dataSetId)
  })

  it('takes a signature from a session key the payer authorised for AddPieces (SessionKeyRegistry)', async () => {
    const session = await foc.wallet('session key')
    await SessionKey.loginSync(payer, {
      address: session.account.address,
      permissions: [SessionKey.AddPiecesPermission],
      expiresAt: BigInt(GENESIS + 365 * 86_400),
    })
    const extra = buildPieceTree(testBytes(300, 23))
    const signed = await TypedData.signAddPieces(session, {
      clientDataSetId,
      nonce: 3n,
      pieces: [{ pieceCid: Piece.calculate(testBytes(300, 23)) }],
    })
    await pdpSend('addPieces', [dataSetId, zeroAddress, [{ data: extra.cidHex }], signed])
    pieces.push({ data: testBytes(300, 23), tree: extra, metadata: [] })
    // not for creating data sets, which it was not given
    const create = await TypedData.signCreateDataSet(session, {
      clientDataSetId: 7002n,
      payee: payee.account.address,
      payer: payer.account.address,
    })
    expect(await revertOf(pdpSend('createDataSet', [fwss, create]))).toEqual({
      errorName: 'InvalidSignature',
      args: [payer.account.address, session.account.address],
    })
  })

  it('starts proving only inside the first challenge window, then records a proof made in the window', async () => {
    const now = BigInt(foc.epoch())
    expect(await revertOf(pdpSend('nextProvingPeriod', [dataSetId, now + 50n, '0x']))).toEqual({
      errorName: 'InvalidChallengeEpoch',
      args: [dataSetId, now + MAX_PROVING_PERIOD - CHALLENGE_WINDOW, now + MAX_PROVING_PERIOD, now + 50n],
    })
    const [, , , windowStart] = await view<[bigint, bigint, bigint, bigint]>('getPDPConfig', [])
    await pdpSend('nextProvingPeriod', [dataSetId, windowStart, '0x'])
    activation = now
    deadline = now + MAX_PROVING_PERIOD
    expect(await view('provingActivationEpoch', [dataSetId])).toBe(activation)
    expect(await view('provingDeadline', [dataSetId])).toBe(deadline)
    expect(await view('nextPDPChallengeWindowStart', [dataSetId])).toBe(deadline + MAX_PROVING_PERIOD - CHALLENGE_WINDOW)
    expect(await view('getDataSetStatus', [dataSetId])).toBe(1)
    expect(await view('provenThisPeriod', [dataSetId])).toBe(false)

    foc.setEpoch(Number(windowStart))
    expect(await revertOf(proveNow(4))).toEqual({ errorName: 'InvalidChallengeCount', args: [dataSetId, 5n, 4n] })
    await proveNow()
    expect(await view('provenThisPeriod', [dataSetId])).toBe(true)
    expect(await view('provenPeriods', [dataSetId, 0n])).toBe(true)
    expect(await revertOf(proveNow())).toEqual({ errorName: 'ProofAlreadySubmitted', args: [dataSetId] })
  })

  it('moves to the next period without a fault after a proof, and records the periods left unproven as faults', async () => {
    const next = deadline + MAX_PROVING_PERIOD
    const first = await pdpSend('nextProvingPeriod', [dataSetId, next - CHALLENGE_WINDOW, '0x'])
    expect(fwssEvents(first).filter((e) => e.eventName === 'FaultRecord')).toEqual([])
    expect(await view('provingDeadline', [dataSetId])).toBe(next)
    expect(await revertOf(pdpSend('nextProvingPeriod', [dataSetId, next + MAX_PROVING_PERIOD, '0x']))).toEqual({
      errorName: 'NextProvingPeriodAlreadyCalled',
      args: [dataSetId, deadline, BigInt(foc.epoch())],
    })

    // no proof in this period nor the next one: two periods faulted
    foc.setEpoch(Number(next + MAX_PROVING_PERIOD + 5n))
    expect(await revertOf(proveNow())).toMatchObject({ errorName: 'ProvingPeriodPassed' })
    const later = next + 2n * MAX_PROVING_PERIOD
    const receipt = await pdpSend('nextProvingPeriod', [dataSetId, later - 1n, '0x'])
    expect(fwssEvents(receipt).find((e) => e.eventName === 'FaultRecord')?.args).toEqual({ dataSetId, periodsFaulted: 2n, deadline: next })
    expect(await view('provingDeadline', [dataSetId])).toBe(later)
    expect(await view('provenPeriods', [dataSetId, 1n])).toBe(false)
  })

  it('lets Filecoin Pay pay the provider only for proven epochs (validatePayment)', async () => {
    // the SDK's own settlement call, as the provider's payee would make it
    const settle = (untilEpoch: bigint) => Pay.settleRailSync(payee, { railId: info.pdpRailId, untilEpoch })
    const before = (await payAccount(payee.account.address)).funds
    // up to the first deadline: the proven period is paid in full
    await settle(deadline)
    const earned = FLOOR_RATE * MAX_PROVING_PERIOD
    const networkFee = (earned + 199n) / 200n
    expect((await payAccount(payee.account.address)).funds).toBe(before + earned - networkFee)
    // the two faulted periods pay nothing, but settlement moves past them
    const faultedEnd = deadline + 2n * MAX_PROVING_PERIOD
    await settle(faultedEnd)
    expect((await payAccount(payee.account.address)).funds).toBe(before + earned - networkFee)
    expect((await Pay.getRail(foc.publicClient, { railId: info.pdpRailId })).settledUpTo).toBe(faultedEnd)
  })

  it('creates a data set and adds its pieces in one call (setId 0) on the SDK’s combined signature', async () => {
    const data = testBytes(1500, 31)
    const tree = buildPieceTree(data)
    const extraData = await TypedData.signCreateDataSetAndAddPieces(payer, {
      clientDataSetId: 7003n,
      payee: payee.account.address,
      metadata: [{ key: 'source', value: 'nextcloud' }],
      pieces: [{ pieceCid: Piece.calculate(data), metadata: [{ key: 'name', value: 'b.bin' }] }],
    })
    const receipt = await pdpSend('addPieces', [0n, fwss, [{ data: tree.cidHex }], extraData])
    const created = parseEventLogs({ abi: Abis.pdp, logs: receipt.logs, eventName: 'DataSetCreated' })
    const newId = created[0].args.setId
    expect(newId).toBe(2n)
    expect(await WarmStorage.getClientDataSetsLength(foc.publicClient, { address: payer.account.address })).toBe(2n)
    expect(await WarmStorage.getAllPieceMetadata(foc.publicClient, { dataSetId: newId, pieceId: 0n })).toEqual({ name: 'b.bin' })
    expect((await PdpVerifier.getActivePieces(foc.publicClient, { dataSetId: newId })).pieces.map((p) => bytesToHex(p.cid.bytes))).toEqual([
      tree.cidHex,
    ])
  })

  it('opens the two CDN rails for a "withCDN" data set, and FilBeam’s controller can end them', async () => {
    const extraData = await TypedData.signCreateDataSet(payer, {
      clientDataSetId: 7004n,
      payee: payee.account.address,
      metadata: [{ key: 'withCDN', value: '' }],
    })
    const receipt = await pdpSend('createDataSet', [fwss, extraData])
    const events = fwssEvents(receipt)
    const created = events.find((e) => e.eventName === 'DataSetCreated')!.args as {
      dataSetId: bigint
      cacheMissRailId: bigint
      cdnRailId: bigint
    }
    expect(created.cacheMissRailId).toBeGreaterThan(0n)
    expect(created.cdnRailId).toBeGreaterThan(0n)
    expect(events.find((e) => e.eventName === 'CDNPaymentRailsToppedUp')?.args).toMatchObject({
      cdnAmountAdded: USDFC('0.7'),
      cacheMissAmountAdded: USDFC('0.3'),
    })
    expect(await Pay.getRail(foc.publicClient, { railId: created.cdnRailId })).toMatchObject({
      to: foc.deployer.account.address, // the FilBeam beneficiary on the simulated network
      lockupFixed: USDFC('0.7'),
    })
    expect((await Pay.getRail(foc.publicClient, { railId: created.cacheMissRailId })).lockupFixed).toBe(USDFC('0.3'))
    expect((await WarmStorage.getPdpDataSet(foc.publicClient, { dataSetId: created.dataSetId }))?.cdn).toBe(true)

    expect(await revertOf(foc.send(payer, fwss, Abis.fwss, 'terminateCDNService', [created.dataSetId]))).toMatchObject({
      errorName: 'OnlyFilBeamControllerAllowed',
    })
    const ended = await foc.send(foc.deployer, fwss, Abis.fwss, 'terminateCDNService', [created.dataSetId])
    expect(fwssEvents(ended).find((e) => e.eventName === 'CDNServiceTerminated')?.args).toMatchObject({ dataSetId: created.dataSetId })
    expect(await WarmStorage.getAllDataSetMetadata(foc.publicClient, { dataSetId: created.dataSetId })).toEqual({})
  })

  it('schedules piece removals on the SDK’s SchedulePieceRemovals signature and drops their metadata at the next period', async () => {
    const extraData = await TypedData.signSchedulePieceRemovals(payer, { clientDataSetId, pieceIds: [0n] })
    const forged = await TypedData.signSchedulePieceRemovals(mallory, { clientDataSetId, pieceIds: [0n] })
    expect((await revertOf(pdpSend('schedulePieceDeletions', [dataSetId, [0n], forged]))).errorName).toBe('InvalidSignature')
    await pdpSend('schedulePieceDeletions', [dataSetId, [0n], extraData])
    expect(await PdpVerifier.getScheduledRemovals(foc.publicClient, { dataSetId })).toEqual([0n])
    const deadlineNow = await view<bigint>('provingDeadline', [dataSetId])
    foc.setEpoch(Number(deadlineNow - CHALLENGE_WINDOW))
    await pdpSend('nextProvingPeriod', [dataSetId, deadlineNow + MAX_PROVING_PERIOD - CHALLENGE_WINDOW, '0x'])
    expect(await WarmStorage.getAllPieceMetadata(foc.publicClient, { dataSetId, pieceId: 0n })).toEqual({})
    expect(await PdpVerifier.getActivePieceCount(foc.publicClient, { dataSetId })).toBe(2n)
  })

  it('ends the service on the payer’s terminateService: Filecoin Pay reports the end epoch back, and no pieces are added after', async () => {
    expect(await revertOf(foc.send(mallory, fwss, Abis.fwss, 'terminateService', [dataSetId]))).toMatchObject({
      errorName: 'CallerNotPayerOrPayee',
    })
    const { receipt } = await WarmStorage.terminateServiceSync(payer, { dataSetId })
    const events = fwssEvents(receipt)
    const rail = await Pay.getRail(foc.publicClient, { railId: info.pdpRailId })
    expect(rail.endEpoch).toBeGreaterThan(0n)
    expect(events.find((e) => e.eventName === 'PDPPaymentTerminated')?.args).toEqual({
      dataSetId,
      endEpoch: rail.endEpoch,
      pdpRailId: info.pdpRailId,
    })
    expect(events.find((e) => e.eventName === 'ServiceTerminated')?.args).toMatchObject({ caller: payer.account.address, dataSetId })
    expect((await WarmStorage.getDataSet(foc.publicClient, { dataSetId }))?.pdpEndEpoch).toBe(rail.endEpoch)

    const signed = await TypedData.signAddPieces(payer, {
      clientDataSetId,
      nonce: 9n,
      pieces: [{ pieceCid: Piece.calculate(pieces[1].data) }],
    })
    expect(await revertOf(pdpSend('addPieces', [dataSetId, zeroAddress, [{ data: pieces[1].tree.cidHex as Hex }], signed]))).toEqual({
      errorName: 'DataSetPaymentAlreadyTerminated',
      args: [dataSetId],
    })
  })

  it('deletes the data set once its rail is settled to the end epoch, and forgets it', async () => {
    const { endEpoch } = await Pay.getRail(foc.publicClient, { railId: info.pdpRailId })
    expect(await revertOf(pdpSend('deleteDataSet', [dataSetId, '0x']))).toEqual({
      errorName: 'PaymentRailsNotFinalized',
      args: [dataSetId, endEpoch],
    })
    // Just past the end epoch, its proving period is still open (a proof may come until its deadline),
    // so validatePayment holds settlement at the last closed period and deletion must wait.
    foc.setEpoch(Number(endEpoch) + 1)
    const settle = () => Pay.settleRailSync(payee, { railId: info.pdpRailId, untilEpoch: endEpoch })
    await settle()
    const lastDeadline = activation + ((endEpoch - activation) / MAX_PROVING_PERIOD) * MAX_PROVING_PERIOD
    expect((await Pay.getRail(foc.publicClient, { railId: info.pdpRailId })).settledUpTo).toBe(lastDeadline)
    expect(await revertOf(pdpSend('deleteDataSet', [dataSetId, '0x']))).toEqual({
      errorName: 'RailNotFullySettled',
      args: [info.pdpRailId, lastDeadline, endEpoch],
    })
    // once that period's deadline has passed unproven, settlement reaches the end and the rail is finalised
    foc.setEpoch(Number(lastDeadline + MAX_PROVING_PERIOD) + 1)
    await settle()
    await pdpSend('deleteDataSet', [dataSetId, '0x'])
    expect(await PdpVerifier.dataSetLive(foc.publicClient, { dataSetId })).toBe(false)
    expect(await WarmStorage.getDataSet(foc.publicClient, { dataSetId })).toBe(null)
    expect(await view('railToDataSet', [info.pdpRailId])).toBe(0n)
    expect(
      (await WarmStorage.getClientDataSets(foc.publicClient, { address: payer.account.address })).map((d) => d.dataSetId).sort(),
    ).toEqual([2n, 3n])
    expect(await WarmStorage.getAllDataSetMetadata(foc.publicClient, { dataSetId })).toEqual({})
    // the clientDataSetId stays spent
    expect(await view('clientNonces', [payer.account.address, clientDataSetId])).toBe(dataSetId)
  })
})
