import * as Abis from '@filoz/synapse-core/abis'
import * as PdpVerifier from '@filoz/synapse-core/pdp-verifier'
import * as Piece from '@filoz/synapse-core/piece'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bytesToHex, parseEventLogs, zeroAddress, type Address, type Hex, type TransactionReceipt } from 'viem'
import { pdpVerifierAbi } from '../../../server/network/foc/abi.ts'
import { buildPieceTree, type PieceTree } from './commp-tree.ts'
import {
  challengedLeaves,
  locate,
  missingFromAbi,
  proofsFor,
  revertOf,
  startFoc,
  testBytes,
  type Foc,
  type SdkClient,
} from './pdp-fixture.ts'

// PDPVerifier 3.4.0 on its own (no listener): data sets and their FIL cleanup deposit, CommPv2
// pieces, proving periods and real Merkle proofs of the challenges drawn from the chain's beacon randomness.
const BURN_ADDRESS: Address = '0xff00000000000000000000000000000000000063'
/** PDPVerifier 3.2's functions the SDK 0.41 ships that 3.4.0 no longer has: the sybil fee is gone for the cleanup deposit. */
const GONE_IN_3_4 = ['FIL_SYBIL_FEE', 'USDFC_SYBIL_FEE', 'USDFC_TOKEN_ADDRESS', 'PAYMENTS_CONTRACT_ADDRESS', 'initialize']

describe('simulated PDPVerifier', () => {
  let foc: Foc
  let sp: SdkClient
  let other: SdkClient
  let pdp: Address
  const setId = 1n
  // three pieces of different heights: 5, 8 (mostly padding) and 4 levels
  const trees: PieceTree[] = [buildPieceTree(testBytes(1000, 1)), buildPieceTree(testBytes(4065, 2)), buildPieceTree(testBytes(300, 3))]
  let challengeEpoch = 0n

  const pdpAbi = () => foc.artifacts.PDPVerifier.abi
  const read = <T>(functionName: string, args: unknown[]) =>
    foc.publicClient.readContract({ address: pdp, abi: pdpAbi(), functionName, args } as never) as Promise<T>
  const events = (receipt: TransactionReceipt) => parseEventLogs({ abi: pdpAbi(), logs: receipt.logs })
  const send = (functionName: string, args: unknown[], value?: bigint, from = sp) =>
    foc.send(from, pdp, pdpAbi(), functionName, args, value)
  const balance = (address: Address) => foc.publicClient.getBalance({ address })

  beforeAll(async () => {
    foc = await startFoc()
    foc.setEpoch(100)
    pdp = foc.addresses.pdp
    sp = await foc.wallet('provider')
    other = await foc.wallet('someone else')
  }, 120_000)
  afterAll(() => foc?.close())

  it('has every function, event and error of 3.4.0 the client uses, and the SDK’s reads but the sybil fee and the proxy upgrades', () => {
    expect(missingFromAbi(pdpVerifierAbi, pdpAbi())).toEqual([])
    const errors = (abi: readonly unknown[]) =>
      (abi as { type: string; name: string }[]).filter((x) => x.type === 'error').map((x) => x.name)
    expect(errors(pdpVerifierAbi).filter((name) => !errors(pdpAbi()).includes(name))).toEqual([])
    expect(missingFromAbi(Abis.pdp, pdpAbi(), GONE_IN_3_4)).toEqual([])
  })

  it('checks the test tree builder against the SDK: same PieceCIDv2 for each piece', () => {
    for (const [i, data] of [testBytes(1000, 1), testBytes(4065, 2), testBytes(300, 3)].entries()) {
      expect(trees[i].cidHex).toBe(bytesToHex(Piece.calculate(data).bytes))
    }
    expect(trees.map((t) => t.height)).toEqual([5, 8, 4])
  })

  it('holds the FIL cleanup deposit of a new data set: refuses none or too little (CleanupDepositRequired), returns the rest', async () => {
    const deposit = await read<bigint>('FIL_CLEANUP_DEPOSIT', [])
    expect(deposit).toBe(10n ** 17n) // 0.1 FIL (src/Fees.sol CLEANUP_DEPOSIT)
    expect(await revertOf(send('createDataSet', [zeroAddress, '0x']))).toEqual({ errorName: 'CleanupDepositRequired', args: [] })
    expect(await revertOf(send('createDataSet', [zeroAddress, '0x'], deposit - 1n))).toEqual({
      errorName: 'CleanupDepositRequired',
      args: [],
    })

    const burnt = await balance(BURN_ADDRESS)
    const before = await balance(sp.account.address)
    const held = await balance(pdp)
    const receipt = await send('createDataSet', [zeroAddress, '0x'], deposit * 3n)
    const gas = receipt.gasUsed * receipt.effectiveGasPrice
    // Held by the verifier, not burnt; the excess came back.
    expect(await balance(BURN_ADDRESS)).toBe(burnt)
    expect(await balance(pdp)).toBe(held + deposit)
    expect(await balance(sp.account.address)).toBe(before - deposit - gas)
    expect(events(receipt)).toMatchObject([{ eventName: 'DataSetCreated', args: { setId, storageProvider: sp.account.address } }])

    expect(await PdpVerifier.dataSetLive(foc.publicClient, { dataSetId: setId })).toBe(true)
    expect(await PdpVerifier.getDataSetStorageProvider(foc.publicClient, { dataSetId: setId })).toEqual([sp.account.address, null])
    expect(await PdpVerifier.getDataSetListener(foc.publicClient, { dataSetId: setId })).toBe(null) // the SDK reads no listener as null
    expect(await PdpVerifier.dataSetLive(foc.publicClient, { dataSetId: 2n })).toBe(false)
  })

  it('adds CommPv2 pieces, counting the leaves that hold data from the CID’s height and padding', async () => {
    const receipt = await send('addPieces', [setId, zeroAddress, trees.map((t) => ({ data: t.cidHex })), '0x'])
    expect(events(receipt)).toMatchObject([
      { eventName: 'PiecesAdded', args: { setId, pieceIds: [0n, 1n, 2n], pieceCids: trees.map((t) => ({ data: t.cidHex })) } },
    ])
    const leafCounts = trees.map((t) => BigInt(t.dataLeaves))
    expect(leafCounts).toEqual([32n, 129n, 10n])

    // the SDK's own reads
    expect(await PdpVerifier.getDataSetLeafCount(foc.publicClient, { dataSetId: setId })).toBe(32n + 129n + 10n)
    expect(await PdpVerifier.getNextPieceId(foc.publicClient, { dataSetId: setId })).toBe(3n)
    expect(await PdpVerifier.getActivePieceCount(foc.publicClient, { dataSetId: setId })).toBe(3n)
    const active = await PdpVerifier.getActivePieces(foc.publicClient, { dataSetId: setId })
    expect(active.hasMore).toBe(false)
    expect(active.pieces.map((p) => [p.id, bytesToHex(p.cid.bytes)])).toEqual(trees.map((t, i) => [BigInt(i), t.cidHex]))
    const page = await PdpVerifier.getActivePieces(foc.publicClient, { dataSetId: setId, offset: 1n, limit: 1n })
    expect([page.pieces.map((p) => p.id), page.hasMore]).toEqual([[1n], true])
    const cid = Piece.parse(Piece.calculate(testBytes(4065, 2)).toString())
    expect(await PdpVerifier.findPieceIdsByCid(foc.publicClient, { dataSetId: setId, pieceCid: cid })).toEqual([1n])

    expect(await read('getPieceLeafCount', [setId, 1n])).toBe(129n)
    expect(await read('getPieceCid', [setId, 2n])).toEqual({ data: trees[2].cidHex })
    expect(await read('pieceLive', [setId, 2n])).toBe(true)
    expect(await read('pieceLive', [setId, 3n])).toBe(false)
  })

  it('refuses a CID that is not CommPv2, padding larger than the tree, another sender and FIL on an add', async () => {
    const raw = `0x01551220${'ab'.repeat(32)}` as Hex // a CIDv1 of raw sha2-256: not a piece commitment
    expect(await revertOf(send('addPieces', [setId, zeroAddress, [{ data: raw }], '0x']))).toEqual({ reason: 'Cid must be CommPv2' })
    // height 2 holds 127 raw bytes: padding them all leaves no data
    const empty = `0x0155912022${'7f'}02${'00'.repeat(32)}` as Hex
    expect(await revertOf(send('addPieces', [setId, zeroAddress, [{ data: trees[0].cidHex }, { data: empty }], '0x']))).toEqual({
      errorName: 'IndexedError',
      args: [1n, 'Padding is too large'],
    })
    const piece = [{ data: trees[0].cidHex }]
    expect(await revertOf(send('addPieces', [setId, zeroAddress, piece, '0x'], undefined, other))).toEqual({
      reason: 'Only the storage provider can add pieces',
    })
    expect(await revertOf(send('addPieces', [setId, zeroAddress, piece, '0x'], 1n))).toEqual({
      reason: 'no fee on add to existing dataset',
    })
    expect(await PdpVerifier.getNextPieceId(foc.publicClient, { dataSetId: setId })).toBe(3n)
  })

  it('starts proving only with the challenge at least challengeFinality epochs ahead; a proof before it is premature', async () => {
    const finality = await read<bigint>('getChallengeFinality', [])
    expect(finality).toBe(10n)
    const now = BigInt(foc.epoch())
    expect(await revertOf(send('nextProvingPeriod', [setId, now + finality - 1n, '0x']))).toEqual({
      errorName: 'InsufficientChallengeDelay',
      args: [finality - 1n, finality],
    })
    challengeEpoch = now + finality
    const receipt = await send('nextProvingPeriod', [setId, challengeEpoch, '0x'])
    expect(events(receipt)).toMatchObject([{ eventName: 'NextProvingPeriod', args: { setId, challengeEpoch, leafCount: 171n } }])
    expect(await PdpVerifier.getNextChallengeEpoch(foc.publicClient, { dataSetId: setId })).toBe(challengeEpoch)
    expect(await read('getChallengeRange', [setId])).toBe(171n)
    expect(await read('getDataSetLastProvenEpoch', [setId])).toBe(now)

    const anyProof = trees[0].proof(0)
    expect(await revertOf(send('provePossession', [setId, [anyProof]], 10n ** 15n))).toEqual({ reason: 'premature proof' })
  })

  it('accepts Merkle paths that answer the beacon-drawn challenges, and burns the proof fee', async () => {
    foc.setEpoch(Number(challengeEpoch) + 2)
    const seed = await read<bigint>('getRandomness', [challengeEpoch])
    const range = await read<bigint>('getChallengeRange', [setId])
    const leaves = challengedLeaves(seed, setId, 8, range)
    const expected = leaves.map((leaf) =>
      locate(
        leaf,
        trees.map((t) => BigInt(t.dataLeaves)),
      ),
    )
    expect(await read('findPieceIds', [setId, leaves])).toEqual(expected)

    const fee = await read<bigint>('calculateProofFee', [setId])
    expect(fee).toBe((230_000_000_000_000n * 171n * 32n) >> 40n)
    const burnt = await balance(BURN_ADDRESS)
    const proofs = proofsFor(expected, new Map(trees.map((t, i) => [BigInt(i), t])))
    const receipt = await send('provePossession', [setId, proofs], fee + 12345n)
    expect(events(receipt)).toMatchObject([
      { eventName: 'ProofFeePaid', args: { setId, fee } },
      { eventName: 'PossessionProven', args: { setId, challenges: expected } },
    ])
    expect(await balance(BURN_ADDRESS)).toBe(burnt + fee)
    expect(await read('getDataSetLastProvenEpoch', [setId])).toBe(challengeEpoch + 2n)
  })

  it('refuses a wrong sibling, a wrong leaf, a path of the wrong length and a proof from another account', async () => {
    const seed = await read<bigint>('getRandomness', [challengeEpoch])
    const range = await read<bigint>('getChallengeRange', [setId])
    const at = challengedLeaves(seed, setId, 1, range).map((leaf) =>
      locate(
        leaf,
        trees.map((t) => BigInt(t.dataLeaves)),
      ),
    )
    const [good] = proofsFor(at, new Map(trees.map((t, i) => [BigInt(i), t])))
    const flip = (h: Hex): Hex => `${h.slice(0, -2)}${h.endsWith('00') ? '01' : '00'}` as Hex
    const value = 10n ** 15n

    const wrongSibling = { leaf: good.leaf, proof: [flip(good.proof[0]), ...good.proof.slice(1)] }
    expect(await revertOf(send('provePossession', [setId, [wrongSibling]], value))).toEqual({ reason: 'proof did not verify' })
    const wrongLeaf = { leaf: flip(good.leaf), proof: good.proof }
    expect(await revertOf(send('provePossession', [setId, [wrongLeaf]], value))).toEqual({ reason: 'proof did not verify' })
    const short = { leaf: good.leaf, proof: good.proof.slice(1) }
    expect(await revertOf(send('provePossession', [setId, [short]], value))).toEqual({ reason: 'proof length does not match tree height' })
    expect(await revertOf(send('provePossession', [setId, [good]], value, other))).toEqual({
      reason: 'Only the storage provider can prove possession',
    })
    // the same proof from the provider passes
    await send('provePossession', [setId, [good]], value)
  })

  it('removes scheduled pieces at the next proving period, and challenges land only in the pieces left', async () => {
    const receipt = await send('schedulePieceDeletions', [setId, [1n], '0x'])
    expect(receipt.status).toBe('success')
    expect(await PdpVerifier.getScheduledRemovals(foc.publicClient, { dataSetId: setId })).toEqual([1n])
    expect(await revertOf(send('schedulePieceDeletions', [setId, [1n], '0x']))).toEqual({
      reason: 'Piece ID already scheduled for removal',
    })

    foc.setEpoch(foc.epoch() + 5)
    challengeEpoch = BigInt(foc.epoch()) + 10n
    const next = await send('nextProvingPeriod', [setId, challengeEpoch, '0x'])
    expect(events(next)).toMatchObject([
      { eventName: 'PiecesRemoved', args: { setId, pieceIds: [1n] } },
      { eventName: 'NextProvingPeriod', args: { setId, challengeEpoch, leafCount: 42n } },
    ])
    expect(await PdpVerifier.getScheduledRemovals(foc.publicClient, { dataSetId: setId })).toEqual([])
    expect(await PdpVerifier.getActivePieceCount(foc.publicClient, { dataSetId: setId })).toBe(2n)
    expect((await PdpVerifier.getActivePieces(foc.publicClient, { dataSetId: setId })).pieces.map((p) => p.id)).toEqual([0n, 2n])
    expect(await read('pieceLive', [setId, 1n])).toBe(false)

    foc.setEpoch(Number(challengeEpoch))
    const seed = await read<bigint>('getRandomness', [challengeEpoch])
    const leaves = challengedLeaves(seed, setId, 16, 42n)
    const expected = leaves.map((leaf) => locate(leaf, [32n, 0n, 10n]))
    expect(new Set(expected.map((c) => c.pieceId))).toEqual(new Set([0n, 2n]))
    const proofs = proofsFor(
      expected,
      new Map([
        [0n, trees[0]],
        [2n, trees[2]],
      ]),
    )
    const proven = await send('provePossession', [setId, proofs], 10n ** 15n)
    expect(events(proven).find((e) => e.eventName === 'PossessionProven')?.args).toEqual({ setId, challenges: expected })
  })

  it('finds the piece of every leaf across many pieces, before and after removals (the sum tree)', async () => {
    await send('createDataSet', [zeroAddress, '0x'], await read<bigint>('FIL_CLEANUP_DEPOSIT', []))
    const set2 = 2n
    const sizes = [130, 2000, 127, 700, 5000, 260, 1016, 90, 3100, 400, 1500]
    const many = sizes.map((size, i) => buildPieceTree(testBytes(size, 10 + i)))
    await send('addPieces', [set2, zeroAddress, many.slice(0, 6).map((t) => ({ data: t.cidHex })), '0x'])
    await send('addPieces', [set2, zeroAddress, many.slice(6).map((t) => ({ data: t.cidHex })), '0x'])
    let counts = many.map((t) => BigInt(t.dataLeaves))
    const everyLeaf = (n: bigint) => Array.from({ length: Number(n) }, (_, i) => BigInt(i))
    let total = counts.reduce((a, b) => a + b)
    expect(await read('findPieceIds', [set2, everyLeaf(total)])).toEqual(everyLeaf(total).map((leaf) => locate(leaf, counts)))

    await send('schedulePieceDeletions', [set2, [4n, 0n, 9n], '0x'])
    foc.setEpoch(foc.epoch() + 1)
    await send('nextProvingPeriod', [set2, BigInt(foc.epoch()) + 10n, '0x'])
    counts = counts.map((c, i) => ([4, 0, 9].includes(i) ? 0n : c))
    total = counts.reduce((a, b) => a + b)
    expect(await PdpVerifier.getDataSetLeafCount(foc.publicClient, { dataSetId: set2 })).toBe(total)
    expect(await read('findPieceIds', [set2, everyLeaf(total)])).toEqual(everyLeaf(total).map((leaf) => locate(leaf, counts)))
  })

  it('deletes a data set: no longer live, and its reads revert with DataSetNotLive', async () => {
    expect(await revertOf(send('deleteDataSet', [setId, '0x'], undefined, other))).toEqual({
      errorName: 'OnlyStorageProviderCanDelete',
      args: [],
    })
    const receipt = await send('deleteDataSet', [setId, '0x'])
    expect(events(receipt)).toMatchObject([{ eventName: 'DataSetDeleted', args: { setId, deletedLeafCount: 42n } }])
    expect(await PdpVerifier.dataSetLive(foc.publicClient, { dataSetId: setId })).toBe(false)
    expect(await revertOf(read('getDataSetLeafCount', [setId]))).toEqual({ errorName: 'DataSetNotLive', args: [] })
    // SDK 0.41 answers "nothing" only on 3.2's revert string "Data set not live"; on 3.4.0's custom
    // error its reads throw, so the client asks dataSetLive first (server/network/foc/copy-proof.ts).
    await expect(PdpVerifier.getActivePieces(foc.publicClient, { dataSetId: setId })).rejects.toThrow(/0x5d946944|DataSetNotLive/)
  })
})
