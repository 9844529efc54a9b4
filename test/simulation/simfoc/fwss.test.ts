import * as Pay from '@filoz/synapse-core/pay'
import * as PdpVerifier from '@filoz/synapse-core/pdp-verifier'
import * as Piece from '@filoz/synapse-core/piece'
import * as SessionKey from '@filoz/synapse-core/session-key'
import * as SpRegistry from '@filoz/synapse-core/sp-registry'
import * as TypedData from '@filoz/synapse-core/typed-data'
import * as WarmStorage from '@filoz/synapse-core/warm-storage'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { encodeAbiParameters, parseEventLogs, parseUnits, zeroAddress, type Address, type Hex, type TransactionReceipt } from 'viem'
import { fwssAbi, fwssViewAbi, pdpVerifierAbi } from '../../../server/network/foc/abi.ts'
import { buildPieceTree, type PieceTree } from './commp-tree.ts'
import {
  challengedLeaves,
  GENESIS,
  locate,
  missingFromAbi,
  proofsFor,
  revertOf,
  startFoc,
  testBytes,
  type Foc,
  type SdkClient,
} from './pdp-fixture.ts'

// FilecoinWarmStorageService 1.3.1 and its view on the simulated chain, driven as a client and a
// provider drive them: the payer's authorisations are signed by the SDK's typed-data functions
// (unchanged in 1.3.1), the provider calls PDPVerifier, and the results are read through the 1.3.1
// ABIs the gateway's client reads them with (server/network/foc/abi.ts).
const USDFC = (amount: string) => parseUnits(amount, 18)
const MAX_PROVING_PERIOD = 240n
const CHALLENGE_WINDOW = 20n
const MONTH = 86_400n
/** src/lib/PriceListUSDFC.sol */
const FEE = {
  create: USDFC('0.025'),
  addBase: USDFC('0.0005'),
  addPiece: USDFC('0.0003'),
  removal: USDFC('0.002'),
  terminate: USDFC('0.00112'),
  reserve: USDFC('0.1'),
}
/** The rate of a data set of `leaves` data leaves: its raw size at 2.5 USDFC per TiB-month, plus 0.024 USDFC a month (PriceListUSDFC.sol calculateStorageRate). */
const rateOf = (leaves: bigint) => (((leaves * 32n * 127n) / 128n) * USDFC('2.5')) / (2n ** 40n * MONTH) + USDFC('0.024') / MONTH
/** Filecoin Pay's network fee on every payment: 1/200, rounded up. */
const afterNetworkFee = (amount: bigint) => amount - (amount + 199n) / 200n

describe('simulated FilecoinWarmStorageService (1.3.1)', () => {
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
  let pdpRailId = 0n
  const pieces: { tree: PieceTree; data: Uint8Array; metadata: { key: string; value: string }[] }[] = [
    { data: testBytes(2000, 21), tree: buildPieceTree(testBytes(2000, 21)), metadata: [{ key: 'name', value: 'hello.txt' }] },
    { data: testBytes(500, 22), tree: buildPieceTree(testBytes(500, 22)), metadata: [] },
  ]
  const leavesOf = (list: typeof pieces) => list.reduce((sum, p) => sum + BigInt(p.tree.dataLeaves), 0n)
  let activation = 0n
  let deadline = 0n
  const deposit = USDFC('0.1') // PDPVerifier 3.4.0's FIL cleanup deposit

  /** The simulated contracts' own ABIs, for the calls the client never makes and the errors of all three (the 1.3.1 shapes are checked first). */
  // The service with the two libraries it links: their errors revert through it (as SignatureVerificationLib's and Rails.sol's do).
  const simAbi = () => [
    ...foc.artifacts.PDPVerifier.abi,
    ...foc.artifacts.FilecoinWarmStorageService.abi,
    ...foc.artifacts.FwssRails.abi,
    ...foc.artifacts.FwssSignatures.abi,
  ]
  const pdpSend = (functionName: string, args: unknown[], value?: bigint) => foc.send(sp, pdp, simAbi(), functionName, args, value)
  const fwssSend = (from: SdkClient, functionName: string, args: unknown[]) => foc.send(from, fwss, simAbi(), functionName, args)
  const fwssEvents = (receipt: TransactionReceipt) => parseEventLogs({ abi: fwssAbi, logs: receipt.logs })
  const view = <T>(functionName: string, args: unknown[]) =>
    foc.publicClient.readContract({ address: foc.addresses.fwssView, abi: fwssViewAbi, functionName, args } as never) as Promise<T>
  const dataSetView = (id: bigint) =>
    view<Record<string, unknown> & { pdpRailId: bigint; lifecycleReserveBalance: bigint }>('getDataSet', [id])
  const payAccount = (address: Address) => Pay.accounts(foc.publicClient, { address })
  const rail = (railId: bigint) => Pay.getRail(foc.publicClient, { railId })

  /** Five challenges (FWSS's CHALLENGES_PER_PROOF) answered from the pieces' trees. */
  async function proveNow(count = 5): Promise<TransactionReceipt> {
    const challengeEpoch = (await PdpVerifier.getNextChallengeEpoch(foc.publicClient, { dataSetId }))!
    const read = (functionName: string, args: unknown[]) =>
      foc.publicClient.readContract({ address: pdp, abi: foc.artifacts.PDPVerifier.abi, functionName, args } as never)
    const seed = (await read('getRandomness', [challengeEpoch])) as bigint
    const range = (await read('getChallengeRange', [dataSetId])) as bigint
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

    // the provider registers (the SDK's own call: the registry is unchanged) and the service's owner approves it
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

  it('has every function, event and error of the 1.3.1 service and view the client uses, with the same types', () => {
    expect(missingFromAbi(fwssAbi, foc.artifacts.FilecoinWarmStorageService.abi)).toEqual([])
    expect(missingFromAbi(fwssViewAbi, foc.artifacts.FilecoinWarmStorageServiceStateView.abi)).toEqual([])
    const errors = (abi: readonly unknown[]) =>
      new Set((abi as { type: string; name: string }[]).filter((x) => x.type === 'error').map((x) => x.name))
    const ours = new Set([
      ...errors(foc.artifacts.FilecoinWarmStorageService.abi),
      ...errors(foc.artifacts.FwssRails.abi),
      ...errors(foc.artifacts.FwssSignatures.abi),
    ])
    expect([...errors(fwssAbi)].filter((name) => !ours.has(name))).toEqual([])
  })

  it('publishes its price list: fixed rates, fees per operation, the lifecycle reserve', async () => {
    expect(await view('getPriceList', [])).toEqual({
      token: foc.addresses.usdfc,
      rates: {
        storagePerTibPerMonth: USDFC('2.5'),
        datasetFeePerMonth: USDFC('0.024'),
        cdnEgressPerTib: USDFC('7'),
        cacheMissEgressPerTib: USDFC('7'),
      },
      fees: {
        createDataSetFee: FEE.create,
        addPiecesBaseFee: FEE.addBase,
        addPiecesPerPieceFee: FEE.addPiece,
        schedulePieceRemovalsFee: FEE.removal,
        terminateFee: FEE.terminate,
      },
      lockups: {
        lifecycleReserveTarget: FEE.reserve,
        replenishThreshold: USDFC('0.005'),
        defaultLockupPeriod: MONTH,
        cdnLockupAmount: USDFC('0.7'),
        cacheMissLockupAmount: USDFC('0.3'),
        cdnLockupPeriod: 5n * 2880n,
      },
    })
    expect(await view('getCurrentPricingRates', [])).toEqual([USDFC('2.5'), USDFC('0.024')])
    // The deprecated getServicePrice keeps its shape: SDK 0.41 reads its last field, now the per-data-set
    // fee added to every rate, as the monthly floor of the generation before.
    expect((await WarmStorage.getServicePrice(foc.publicClient)).minimumPricePerMonth).toBe(USDFC('0.024'))
    expect(await WarmStorage.readAddresses(foc.publicClient, { contractAddress: fwss })).toMatchObject({
      payments: foc.addresses.filecoinPay,
      warmStorageView: foc.addresses.fwssView,
      pdpVerifier: pdp,
    })
    const [fields, name, version, chainId, verifyingContract] = (await foc.publicClient.readContract({
      address: fwss,
      abi: foc.artifacts.FilecoinWarmStorageService.abi,
      functionName: 'eip712Domain',
    })) as readonly [Hex, string, string, bigint, Address]
    expect({ name, version, chainId: Number(chainId), verifyingContract }).toEqual(TypedData.getStorageDomain({ chain: foc.chain }))
    expect(fields).toBe('0x0f')
  })

  it('refuses to create a data set on a signature that is not the payer’s, with the real contract’s InvalidSignature', async () => {
    const forged = await TypedData.signCreateDataSet(mallory, {
      clientDataSetId,
      payee: payee.account.address,
      payer: payer.account.address,
    })
    expect(await revertOf(pdpSend('createDataSet', [fwss, forged], deposit))).toEqual({
      errorName: 'InvalidSignature',
      args: [payer.account.address, mallory.account.address],
    })
    expect(await view('getClientDataSetsLength', [payer.account.address])).toBe(0n)
  })

  it('refuses a data set whose payer has less available than the reserve and a month of the per-data-set fee', async () => {
    const poor = await foc.wallet('poor client')
    await foc.mint(poor.account.address, USDFC('1'))
    await Pay.fundSync(poor, { amount: USDFC('0.12') })
    const extraData = await TypedData.signCreateDataSet(poor, { clientDataSetId: 1n, payee: payee.account.address })
    // 0.1 reserve + 0.024 × 86 400 / 86 400 (Rails.sol validatePayerOperatorApprovalAndFunds)
    expect(await revertOf(pdpSend('createDataSet', [fwss, extraData], deposit))).toEqual({
      errorName: 'InsufficientLockupFunds',
      args: [poor.account.address, USDFC('0.124'), USDFC('0.12')],
    })
  })

  it('creates a data set: a PDP rail with the lifecycle reserve as fixed lockup, the creation fee owed, no rate, the cleanup deposit held', async () => {
    const extraData = await TypedData.signCreateDataSet(payer, {
      clientDataSetId,
      payee: payee.account.address,
      metadata: [
        { key: 'source', value: 'nextcloud' },
        { key: 'group', value: 'a'.repeat(96) },
      ],
    })
    // The provider must send the verifier's cleanup deposit (PDPVerifier 3.4.0), checked after the service agreed.
    expect(await revertOf(pdpSend('createDataSet', [fwss, extraData]))).toEqual({ errorName: 'CleanupDepositRequired', args: [] })
    const before = await payAccount(payer.account.address)
    const filBefore = await foc.publicClient.getBalance({ address: sp.account.address })
    const receipt = await pdpSend('createDataSet', [fwss, extraData], USDFC('1'))
    expect(await foc.publicClient.getBalance({ address: sp.account.address })).toBe(
      filBefore - deposit - receipt.gasUsed * receipt.effectiveGasPrice,
    )
    expect(await foc.publicClient.getBalance({ address: pdp })).toBe(deposit)

    const created = fwssEvents(receipt).find((e) => e.eventName === 'DataSetCreated')!.args as { pdpRailId: bigint }
    expect(created).toMatchObject({ dataSetId, providerId, cacheMissRailId: 0n, cdnRailId: 0n, payer: payer.account.address })
    pdpRailId = created.pdpRailId
    // the 13-field view: the creation fee waits in pendingOneTimePayments for the first flush
    const info = await dataSetView(dataSetId)
    expect(info).toEqual({
      pdpRailId,
      cacheMissRailId: 0n,
      cdnRailId: 0n,
      payer: payer.account.address,
      payee: payee.account.address,
      serviceProvider: sp.account.address,
      commissionBps: 0n,
      clientDataSetId,
      pdpEndEpoch: 0n,
      providerId,
      pendingOneTimePayments: FEE.create,
      lifecycleReserveBalance: FEE.reserve,
      dataSetId,
    })
    expect(await view('getClientDataSets', [payer.account.address, 0n, 0n])).toEqual([info])
    expect(await rail(pdpRailId)).toMatchObject({
      operator: fwss,
      validator: fwss,
      paymentRate: 0n,
      lockupPeriod: MONTH,
      lockupFixed: FEE.reserve,
    })
    const after = await payAccount(payer.account.address)
    expect(after.funds).toBe(before.funds)
    expect(after.lockupCurrent - before.lockupCurrent).toBe(FEE.reserve)
    expect(await view('getAllDataSetMetadata', [dataSetId])).toEqual([
      ['source', 'group'],
      ['nextcloud', 'a'.repeat(96)],
    ])
    // 1.3.1 takes metadata values up to 96 bytes (it was 128)
    const long = await TypedData.signCreateDataSet(payer, {
      clientDataSetId: 7010n,
      payee: payee.account.address,
      metadata: [{ key: 'k', value: 'a'.repeat(97) }],
    })
    expect(await revertOf(pdpSend('createDataSet', [fwss, long], deposit))).toEqual({
      errorName: 'MetadataValueExceedsMaxLength',
      args: [0n, 96n, 97n],
    })
  })

  it('adds pieces: the add fee and the creation fee are paid to the provider out of the reserve, and the rail runs at size rate + data set fee', async () => {
    const signed = await TypedData.signAddPieces(payer, {
      clientDataSetId,
      nonce: 1n,
      pieces: pieces.map((p) => ({ pieceCid: Piece.calculate(p.data), metadata: p.metadata })),
    })
    const cids = pieces.map((p) => ({ data: p.tree.cidHex }))
    const payerBefore = await payAccount(payer.account.address)
    const payeeBefore = await payAccount(payee.account.address)
    const receipt = await pdpSend('addPieces', [dataSetId, zeroAddress, cids, signed])
    const paid = FEE.create + FEE.addBase + 2n * FEE.addPiece // 0.0261
    const rate = rateOf(leavesOf(pieces))
    expect(fwssEvents(receipt).find((e) => e.eventName === 'RailRateUpdated')?.args).toEqual({
      dataSetId,
      railId: pdpRailId,
      newRate: rate,
    })
    expect(await rail(pdpRailId)).toMatchObject({ paymentRate: rate, lockupFixed: FEE.reserve - paid })
    expect(await dataSetView(dataSetId)).toMatchObject({ pendingOneTimePayments: 0n, lifecycleReserveBalance: FEE.reserve - paid })
    const payerAfter = await payAccount(payer.account.address)
    expect(payerAfter.funds).toBe(payerBefore.funds - paid)
    // the month of the new rate is locked; the fees left the fixed lockup with the funds
    expect(payerAfter.lockupCurrent).toBe(payerBefore.lockupCurrent + rate * MONTH - paid)
    expect((await payAccount(payee.account.address)).funds).toBe(payeeBefore.funds + afterNetworkFee(paid))

    expect(
      fwssEvents(receipt)
        .filter((e) => e.eventName === 'PieceAdded')
        .map((e) => e.args),
    ).toEqual([
      { dataSetId, pieceId: 0n, pieceCid: cids[0], keys: ['name'], values: ['hello.txt'] },
      { dataSetId, pieceId: 1n, pieceCid: cids[1], keys: [], values: [] },
    ])
    expect(await view('getAllPieceMetadata', [dataSetId, 0n])).toEqual([['name'], ['hello.txt']])
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
    const reserve = (await dataSetView(dataSetId)).lifecycleReserveBalance
    await pdpSend('addPieces', [dataSetId, zeroAddress, [{ data: extra.cidHex }], signed])
    pieces.push({ data: testBytes(300, 23), tree: extra, metadata: [] })
    expect((await dataSetView(dataSetId)).lifecycleReserveBalance).toBe(reserve - FEE.addBase - FEE.addPiece)
    expect((await rail(pdpRailId)).paymentRate).toBe(rateOf(leavesOf(pieces)))
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

    foc.setEpoch(Number(windowStart))
    expect(await revertOf(proveNow(4))).toEqual({ errorName: 'InvalidChallengeCount', args: [dataSetId, 5n, 4n] })
    await proveNow()
    expect(await view('provenPeriods', [dataSetId, 0n])).toBe(true)
    expect(await revertOf(proveNow())).toEqual({ errorName: 'ProofAlreadySubmitted', args: [dataSetId] })
  })

  it('moves to the next period without a fault after a proof, and records the periods left unproven as faults', async () => {
    const next = deadline + MAX_PROVING_PERIOD
    const first = await pdpSend('nextProvingPeriod', [dataSetId, next - CHALLENGE_WINDOW, '0x'])
    expect(fwssEvents(first).filter((e) => e.eventName === 'FaultRecord')).toEqual([])
    expect(await view('provingDeadline', [dataSetId])).toBe(next)

    // no proof in this period nor the next one: two periods faulted
    foc.setEpoch(Number(next + MAX_PROVING_PERIOD + 5n))
    expect(await revertOf(proveNow())).toMatchObject({ errorName: 'ProvingPeriodPassed' })
    const later = next + 2n * MAX_PROVING_PERIOD
    const receipt = await pdpSend('nextProvingPeriod', [dataSetId, later - 1n, '0x'])
    expect(fwssEvents(receipt).find((e) => e.eventName === 'FaultRecord')?.args).toEqual({ dataSetId, periodsFaulted: 2n, deadline: next })
  })

  it('lets Filecoin Pay pay the provider only for proven epochs (validatePayment)', async () => {
    const settle = (untilEpoch: bigint) => Pay.settleRailSync(payee, { railId: pdpRailId, untilEpoch })
    const before = (await payAccount(payee.account.address)).funds
    // up to the first deadline: the proven period is paid in full, at the rate it had
    await settle(deadline)
    const earned = rateOf(leavesOf(pieces)) * MAX_PROVING_PERIOD
    expect((await payAccount(payee.account.address)).funds).toBe(before + afterNetworkFee(earned))
    // the two faulted periods pay nothing, but settlement moves past them
    const faultedEnd = deadline + 2n * MAX_PROVING_PERIOD
    await settle(faultedEnd)
    expect((await payAccount(payee.account.address)).funds).toBe(before + afterNetworkFee(earned))
    expect((await rail(pdpRailId)).settledUpTo).toBe(faultedEnd)
  })

  it('schedules a removal: its fee is owed at once and paid, with the lower rate, at the next proving period', async () => {
    const extraData = await TypedData.signSchedulePieceRemovals(payer, { clientDataSetId, pieceIds: [1n] })
    const forged = await TypedData.signSchedulePieceRemovals(mallory, { clientDataSetId, pieceIds: [1n] })
    expect((await revertOf(pdpSend('schedulePieceDeletions', [dataSetId, [1n], forged]))).errorName).toBe('InvalidSignature')
    const reserve = (await dataSetView(dataSetId)).lifecycleReserveBalance
    await pdpSend('schedulePieceDeletions', [dataSetId, [1n], extraData])
    expect(await dataSetView(dataSetId)).toMatchObject({ pendingOneTimePayments: FEE.removal, lifecycleReserveBalance: reserve })

    const payeeBefore = (await payAccount(payee.account.address)).funds
    const deadlineNow = await view<bigint>('provingDeadline', [dataSetId])
    foc.setEpoch(Number(deadlineNow - CHALLENGE_WINDOW))
    const receipt = await pdpSend('nextProvingPeriod', [dataSetId, deadlineNow + MAX_PROVING_PERIOD - CHALLENGE_WINDOW, '0x'])
    const left = pieces.filter((_, i) => i !== 1)
    expect(fwssEvents(receipt).find((e) => e.eventName === 'RailRateUpdated')?.args).toEqual({
      dataSetId,
      railId: pdpRailId,
      newRate: rateOf(leavesOf(left)),
    })
    expect(await dataSetView(dataSetId)).toMatchObject({ pendingOneTimePayments: 0n, lifecycleReserveBalance: reserve - FEE.removal })
    expect((await payAccount(payee.account.address)).funds).toBe(payeeBefore + afterNetworkFee(FEE.removal))
    expect(await view('getAllPieceMetadata', [dataSetId, 1n])).toEqual([[], []])
  })

  it('lets the payer add to a data set’s reserve (topUpLifecycleReserve), and no one else', async () => {
    await fwssSend(payer, 'topUpLifecycleReserve', [dataSetId, USDFC('0.001')])
    const reserve = (await dataSetView(dataSetId)).lifecycleReserveBalance
    expect((await rail(pdpRailId)).lockupFixed).toBe(reserve)
    expect(await revertOf(fwssSend(mallory, 'topUpLifecycleReserve', [dataSetId, 1n]))).toMatchObject({
      errorName: 'CallerNotPayer',
    })
  })

  it('creates a data set and adds its pieces in one call (setId 0); the provider alone ends it at once on the payer’s TerminateService', async () => {
    const data = testBytes(1500, 31)
    const tree = buildPieceTree(data)
    const extraData = await TypedData.signCreateDataSetAndAddPieces(payer, {
      clientDataSetId: 7003n,
      payee: payee.account.address,
      metadata: [{ key: 'source', value: 'nextcloud' }],
      pieces: [{ pieceCid: Piece.calculate(data), metadata: [{ key: 'name', value: 'b.bin' }] }],
    })
    expect(await revertOf(pdpSend('addPieces', [0n, fwss, [{ data: tree.cidHex }], extraData]))).toEqual({
      errorName: 'CleanupDepositRequired',
      args: [],
    })
    const receipt = await pdpSend('addPieces', [0n, fwss, [{ data: tree.cidHex }], extraData], deposit)
    const newId = parseEventLogs({ abi: pdpVerifierAbi, logs: receipt.logs, eventName: 'DataSetCreated' })[0].args.setId
    expect(newId).toBe(2n)
    const info = await dataSetView(newId)
    const paid = FEE.create + FEE.addBase + FEE.addPiece
    expect(info).toMatchObject({ pendingOneTimePayments: 0n, lifecycleReserveBalance: FEE.reserve - paid })

    // the payer's consent to end it at once: signed TerminateService(dataSetId), sent by the provider
    const signature = await payer.signTypedData({
      account: payer.account,
      domain: TypedData.getStorageDomain({ chain: foc.chain }),
      types: { TerminateService: [{ name: 'dataSetId', type: 'uint256' }] },
      primaryType: 'TerminateService',
      message: { dataSetId: newId },
    })
    const consent = encodeAbiParameters([{ type: 'bytes' }], [signature])
    expect(await revertOf(fwssSend(payer, 'terminateService', [newId, consent]))).toMatchObject({
      errorName: 'CallerNotServiceProvider',
    })
    const payeeBefore = (await payAccount(payee.account.address)).funds
    const ended = await fwssSend(sp, 'terminateService', [newId, consent])
    expect(fwssEvents(ended).find((e) => e.eventName === 'ServiceTerminated')?.args).toMatchObject({
      approver: payer.account.address,
      dataSetId: newId,
    })
    // the termination fee is paid, the rail keeps no lockup and ends now
    expect((await payAccount(payee.account.address)).funds).toBe(payeeBefore + afterNetworkFee(FEE.terminate))
    const terminated = await rail(info.pdpRailId)
    expect(terminated).toMatchObject({ lockupPeriod: 0n, lockupFixed: 0n, endEpoch: BigInt(foc.epoch()) })
    expect((await dataSetView(newId)).pdpEndEpoch).toBe(BigInt(foc.epoch()))
  })

  it('opens the two CDN rails (five-day lockups) for a "withCDN" data set, and FilBeam’s controller can end them', async () => {
    const extraData = await TypedData.signCreateDataSet(payer, {
      clientDataSetId: 7004n,
      payee: payee.account.address,
      metadata: [{ key: 'withCDN', value: '' }],
    })
    const receipt = await pdpSend('createDataSet', [fwss, extraData], deposit)
    const events = fwssEvents(receipt)
    const created = events.find((e) => e.eventName === 'DataSetCreated')!.args as {
      dataSetId: bigint
      cacheMissRailId: bigint
      cdnRailId: bigint
    }
    expect(events.find((e) => e.eventName === 'CDNPaymentRailsToppedUp')?.args).toMatchObject({
      cdnAmountAdded: USDFC('0.7'),
      cacheMissAmountAdded: USDFC('0.3'),
    })
    expect(await rail(created.cdnRailId)).toMatchObject({
      to: foc.deployer.account.address,
      lockupFixed: USDFC('0.7'),
      lockupPeriod: 14_400n,
    })
    expect(await rail(created.cacheMissRailId)).toMatchObject({ lockupFixed: USDFC('0.3'), lockupPeriod: 14_400n })
    expect(await revertOf(fwssSend(payer, 'terminateCDNService', [created.dataSetId]))).toMatchObject({
      errorName: 'OnlyFilBeamControllerAllowed',
    })
    const ended = await fwssSend(foc.deployer, 'terminateCDNService', [created.dataSetId])
    expect(fwssEvents(ended).find((e) => e.eventName === 'CDNServiceTerminated')?.args).toMatchObject({ dataSetId: created.dataSetId })
    expect(await view('getAllDataSetMetadata', [created.dataSetId])).toEqual([[], []])
  })

  it('ends the service on the payer’s terminateService: Filecoin Pay reports the end epoch back, and no pieces are added after', async () => {
    expect(await revertOf(fwssSend(mallory, 'terminateService', [dataSetId]))).toMatchObject({
      errorName: 'CallerNotPayerOrPayee',
    })
    const receipt = await fwssSend(payer, 'terminateService', [dataSetId])
    const events = fwssEvents(receipt)
    const { endEpoch } = await rail(pdpRailId)
    expect(endEpoch).toBe(BigInt(foc.epoch()) + MONTH)
    expect(events.find((e) => e.eventName === 'PDPPaymentTerminated')?.args).toEqual({ dataSetId, endEpoch, pdpRailId })
    expect(events.find((e) => e.eventName === 'ServiceTerminated')?.args).toMatchObject({ approver: payer.account.address, dataSetId })
    expect((await dataSetView(dataSetId)).pdpEndEpoch).toBe(endEpoch)

    const signed = await TypedData.signAddPieces(payer, {
      clientDataSetId,
      nonce: 9n,
      pieces: [{ pieceCid: Piece.calculate(pieces[1].data) }],
    })
    expect(await revertOf(pdpSend('addPieces', [dataSetId, zeroAddress, [{ data: pieces[1].tree.cidHex as Hex }], signed]))).toEqual({
      errorName: 'DataSetPaymentAlreadyTerminated',
      args: [dataSetId],
    })
    // the account's rails: the two PDP rails ended, the CDN data set's three still running
    const { results } = await Pay.getRailsForPayerAndToken(foc.publicClient, { payer: payer.account.address })
    expect(results.map((r) => [r.railId, r.isTerminated])).toEqual([
      [pdpRailId, true],
      [(await dataSetView(2n)).pdpRailId, true],
      [(await dataSetView(3n)).pdpRailId, false],
      [(await dataSetView(3n)).cacheMissRailId, true],
      [(await dataSetView(3n)).cdnRailId, true],
    ])
  })

  it('deletes the data set once its rail is settled to the end epoch; the provider cleans its pieces up and gets the deposit back', async () => {
    const { endEpoch } = await rail(pdpRailId)
    expect(await revertOf(pdpSend('deleteDataSet', [dataSetId, '0x']))).toEqual({
      errorName: 'PaymentRailsNotFinalized',
      args: [dataSetId, endEpoch],
    })
    // At the end epoch its proving period is still open, so validatePayment holds settlement at the
    // last closed period and deletion must wait for that period's deadline to pass unproven.
    foc.setEpoch(Number(endEpoch))
    const settle = () => Pay.settleRailSync(payee, { railId: pdpRailId, untilEpoch: endEpoch })
    await settle()
    const lastDeadline = activation + ((endEpoch - activation) / MAX_PROVING_PERIOD) * MAX_PROVING_PERIOD
    expect(await revertOf(pdpSend('deleteDataSet', [dataSetId, '0x']))).toEqual({
      errorName: 'RailNotFullySettled',
      args: [pdpRailId, lastDeadline, endEpoch],
    })
    foc.setEpoch(Number(lastDeadline + MAX_PROVING_PERIOD) + 1)
    await settle()
    await pdpSend('deleteDataSet', [dataSetId, '0x'])
    expect(await PdpVerifier.dataSetLive(foc.publicClient, { dataSetId })).toBe(false)
    expect((await dataSetView(dataSetId)).pdpRailId).toBe(0n)
    expect(await view('railToDataSet', [pdpRailId])).toBe(0n)
    expect(
      (await view<{ dataSetId: bigint }[]>('getClientDataSets', [payer.account.address, 0n, 0n])).map((d) => d.dataSetId).sort(),
    ).toEqual([2n, 3n])
    // the clientDataSetId stays spent
    expect(await view('clientNonces', [payer.account.address, clientDataSetId])).toBe(dataSetId)

    // pieces were left: the verifier keeps them in cleanup mode until the provider clears them, and pays it the deposit
    const filBefore = await foc.publicClient.getBalance({ address: sp.account.address })
    const cleaned = await pdpSend('cleanupPieces', [dataSetId, 10n])
    expect(await foc.publicClient.getBalance({ address: sp.account.address })).toBe(
      filBefore + deposit - cleaned.gasUsed * cleaned.effectiveGasPrice,
    )
  })

  it('lets the provider delete a data set that never started proving at once: abandoned, its reserve back to the payer', async () => {
    const extraData = await TypedData.signCreateDataSet(payer, { clientDataSetId: 7005n, payee: payee.account.address })
    const receipt = await pdpSend('createDataSet', [fwss, extraData], deposit)
    const { dataSetId: id, pdpRailId: railId } = fwssEvents(receipt).find((e) => e.eventName === 'DataSetCreated')!.args as {
      dataSetId: bigint
      pdpRailId: bigint
    }
    const before = await payAccount(payer.account.address)
    const deleted = await pdpSend('deleteDataSet', [id, '0x'])
    expect(fwssEvents(deleted).find((e) => e.eventName === 'DataSetAbandoned')?.args).toEqual({
      dataSetId: id,
      pdpRailId: railId,
      cacheMissRailId: 0n,
      cdnRailId: 0n,
    })
    // the creation fee was never paid; the reserve is no longer locked
    const after = await payAccount(payer.account.address)
    expect(after.funds).toBe(before.funds)
    expect(before.lockupCurrent - after.lockupCurrent).toBe(FEE.reserve)
  })
})
