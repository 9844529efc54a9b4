import { parseUnits } from 'viem'
import { describe, expect, it } from 'vitest'
import { copiesCost, copyCost, pieceCidLeaves, pieceLeaves, storageRate, type GaPrices } from '../../../server/network/foc/cost.ts'
import { createPieceHasher, pieceCidV2 } from '../../../server/shared/piece.ts'
import { plannedTargets } from '../../../server/network/foc/funding.ts'
import type { FocDataSet } from '../../../server/network/foc/types.ts'

const USDFC = (n: string) => parseUnits(n, 18)
/** FWSS 1.3.1 src/lib/PriceListUSDFC.sol, as getPriceList returns it. */
const GA: GaPrices = {
  storagePerTibPerMonth: USDFC('2.5'),
  datasetFeePerMonth: USDFC('0.024'),
  createDataSetFee: USDFC('0.025'),
  addPiecesBaseFee: USDFC('0.0005'),
  addPiecesPerPieceFee: USDFC('0.0003'),
  schedulePieceRemovalsFee: USDFC('0.002'),
  lifecycleReserveTarget: USDFC('0.1'),
  replenishThreshold: USDFC('0.005'),
  defaultLockupPeriod: 86_400n,
}
const MONTH = 86_400n

describe("GA's charges for a copy (FWSS 1.3.1 PriceListUSDFC.sol, Rails.sol)", () => {
  it('adds the data set fee to the size rate of a non-empty data set, where SDK 0.41 took it as a floor', () => {
    expect(storageRate(GA, 0n)).toBe(0n)
    const tib = (1n << 40n) / 32n // leaves of 1 TiB padded: 127/128 of it raw
    expect(storageRate(GA, tib)).toBe(((((1n << 40n) * 127n) / 128n) * USDFC('2.5')) / ((1n << 40n) * MONTH) + USDFC('0.024') / MONTH)
    // A one-leaf data set still pays the whole data set fee.
    expect(storageRate(GA, 1n) * MONTH).toBeGreaterThan(USDFC('0.0239'))
  })

  it('counts a piece by its padded size: 127 bytes in 4 leaves, 128 in 8, 1 MiB in 2^16', () => {
    expect(pieceLeaves(127)).toBe(4n)
    expect(pieceLeaves(128)).toBe(8n)
    expect(pieceLeaves(2 ** 20)).toBe(2n ** 16n)
  })

  it('reads the leaves PDPVerifier counts from a v2 piece CID: those holding data, fewer than the padded piece has', () => {
    const bytes = new Uint8Array(300_000).fill(7)
    const hasher = createPieceHasher()
    hasher.update(bytes)
    const v2 = pieceCidV2(hasher.digest().pieceCid, bytes.length)
    // 300 000 bytes: fr32 302 464, padded to 2^19 = 524 288 (height 14: 16 384 leaves); padding 520 192 − 300 000 =
    // 220 192 raw bytes, 221 925 once expanded, 6 935 whole leaves of it (Cids.sol leafCount): 16 384 − 6 935.
    expect(pieceCidLeaves(v2)).toBe(9449n)
    expect(pieceLeaves(bytes.length)).toBe(16_384n)
    expect(() => pieceCidLeaves(hasher.digest().pieceCid)).toThrow(RangeError)
  })

  it('a new data set needs the reserve, 30 days of its whole rate and a removal fee', () => {
    const leaves = pieceLeaves(200_000)
    const cost = copyCost(GA, { kind: 'new' }, leaves)
    expect(cost.rateDelta).toBe(storageRate(GA, leaves))
    expect(cost.needed).toBe(USDFC('0.1') + storageRate(GA, leaves) * MONTH + USDFC('0.002'))
    expect(cost.needed).toBeGreaterThan(USDFC('0.126'))
  })

  it('an existing data set needs the rate it adds, and a top-up of its reserve when the fees would take it under the threshold', () => {
    const healthy = copyCost(GA, { kind: 'existing', leafCount: 4096n, lifecycleReserve: USDFC('0.07'), pendingFees: 0n }, 4096n)
    const added = storageRate(GA, 8192n) - storageRate(GA, 4096n)
    expect(healthy).toEqual({ needed: added * MONTH + USDFC('0.002'), rateDelta: added })
    // 0.0055 left: the add fee (0.0008) would take it under 0.005, so it is raised to 0.1 plus what is owed.
    const low = copyCost(GA, { kind: 'existing', leafCount: 4096n, lifecycleReserve: USDFC('0.0055'), pendingFees: 0n }, 4096n)
    expect(low.needed).toBe(USDFC('0.1') + USDFC('0.0008') - USDFC('0.0055') + added * MONTH + USDFC('0.002'))
  })

  it('keeps a day of the account rate after the copies as a margin', () => {
    const leaves = pieceLeaves(1000)
    const two = copiesCost(GA, [{ kind: 'new' }, { kind: 'new' }], leaves, 1000n, 2880n)
    expect(two.required).toBe(2n * copyCost(GA, { kind: 'new' }, leaves).needed + (1000n + two.rateDelta) * 2880n)
  })
})

describe('where the SDK puts the copies (synapse-core selectProviders)', () => {
  const set = (dataSetId: bigint, providerId: number, more: Partial<FocDataSet> = {}): FocDataSet => ({
    dataSetId,
    providerId,
    clientDataSetId: dataSetId,
    pdpRailId: dataSetId,
    pdpEndEpoch: 0n,
    payer: '0x00000000000000000000000000000000000000aa',
    serviceProvider: '0x00000000000000000000000000000000000000bb',
    pendingFees: 0n,
    lifecycleReserve: USDFC('0.07'),
    live: true,
    managed: true,
    leafCount: 64n,
    activePieceCount: 1n,
    metadata: { source: 'gw' },
    ...more,
  })
  const base = { providerIds: [1, 2, 3], endorsedIds: [1, 2], excluded: [], metadata: { source: 'gw' } }

  it('puts the first copy on an endorsed provider, and adds to our data sets with the same metadata before creating any', () => {
    // A data set on provider 3 (not endorsed) only: the first copy needs a new one on 1, the second goes to 3's.
    expect(plannedTargets({ ...base, copies: 2, dataSets: [set(7n, 3)] }).map((t) => t.kind)).toEqual(['new', 'existing'])
    // Ours on 1 and 2: both copies add.
    expect(plannedTargets({ ...base, copies: 2, dataSets: [set(7n, 1), set(8n, 2)] }).map((t) => t.kind)).toEqual(['existing', 'existing'])
    // Other metadata, a terminated one, one not live: none counts.
    const others = [set(7n, 1, { metadata: { source: 'other' } }), set(8n, 2, { pdpEndEpoch: 500n }), set(9n, 3, { live: false })]
    expect(plannedTargets({ ...base, copies: 3, dataSets: others }).map((t) => t.kind)).toEqual(['new', 'new', 'new'])
  })

  it('makes no more copies than there are providers not excluded', () => {
    expect(plannedTargets({ ...base, copies: 3, excluded: [3], dataSets: [] })).toHaveLength(2)
    expect(plannedTargets({ ...base, copies: 1, excluded: [1, 2], dataSets: [] })).toEqual([])
  })
})
