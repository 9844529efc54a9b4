// What the Onchain Cloud's GA generation charges for a copy, written from FilOzone/filecoin-services
// 1.3.1: src/lib/PriceListUSDFC.sol (the prices, the rate), src/lib/Rails.sol (the lifecycle reserve:
// validatePayerOperatorApprovalAndFunds, createRails, replenishReserveIfNeeded, updateStorageRates) and
// src/FilecoinWarmStorageService.sol (which operation owes which fee). Pure arithmetic on the price list
// the view publishes (getPriceList), so that a price change on chain changes the estimate with it.
//
// DEPARTURE from SDK 0.41 (synapse-core warm-storage/calculate-additional-lockup-required.ts): it takes
// the 0.024 USDFC a month as a floor of the size rate where GA adds it to every non-empty data set's
// rate, budgets a 0.1 USDFC sybil fee GA no longer takes instead of the reserve GA locks, and budgets
// neither the reserve's replenishment nor the removal fee. Funded to its estimate, a second new data
// set reverts with InsufficientLockupFunds.

import { CID } from 'multiformats/cid'

/** fr32-sha2-256-trunc254-padded-binary-tree: the multihash of a v2 piece CID. */
const PIECE_V2_MULTIHASH = 0x1011

/** GA's prices, as FilecoinWarmStorageServiceStateView.getPriceList() returns them (USDFC, 18 decimals). */
export interface GaPrices {
  storagePerTibPerMonth: bigint
  datasetFeePerMonth: bigint
  createDataSetFee: bigint
  addPiecesBaseFee: bigint
  addPiecesPerPieceFee: bigint
  schedulePieceRemovalsFee: bigint
  lifecycleReserveTarget: bigint
  replenishThreshold: bigint
  /** Epochs of rate a rail keeps locked: 30 days. */
  defaultLockupPeriod: bigint
}

/** The two prices a data set's rate is made of. */
export type GaRates = Pick<GaPrices, 'storagePerTibPerMonth' | 'datasetFeePerMonth'>

/** PriceListUSDFC.sol EPOCHS_PER_MONTH: 30 days of 2880 epochs. */
export const EPOCHS_PER_MONTH = 86_400n
const TIB = 1n << 40n

/** The rate of a data set of `leaves` leaves: none when empty, else its raw size's share of the TiB price plus the data set fee (calculateStorageRate). */
export function storageRate(p: GaRates, leaves: bigint): bigint {
  if (leaves === 0n) return 0n
  const rawSize = (leaves * 32n * 127n) / 128n // FilOzone/pdp src/Cids.sol leafCountToRawSize
  return (rawSize * p.storagePerTibPerMonth) / (TIB * EPOCHS_PER_MONTH) + p.datasetFeePerMonth / EPOCHS_PER_MONTH
}

/**
 * The leaves PDPVerifier counts for a piece of `bytes` bytes, at most: the padded piece's (FR32
 * expansion of 127 to 128 bytes, up to a power of two of at least 128 bytes), 32 bytes a leaf.
 * The verifier counts only those holding data, a little fewer: the estimate errs on the safe side.
 */
export function pieceLeaves(bytes: number): bigint {
  const expanded = (BigInt(bytes) * 128n + 126n) / 127n
  let padded = 128n
  while (padded < expanded) padded *= 2n
  return padded / 32n
}

/**
 * The leaves PDPVerifier counts for a piece it is given as a v2 piece CID (FRC-0069: varint padding, height, root):
 * the tree's 2^height leaves less those that are all padding (FilOzone/pdp 3.4.0 src/Cids.sol leafCount).
 */
export function pieceCidLeaves(pieceCid: string): bigint {
  const cid = CID.parse(pieceCid)
  if (cid.multihash.code !== PIECE_V2_MULTIHASH) throw new RangeError(`not a v2 piece CID: ${pieceCid}`)
  const digest = cid.multihash.digest
  let padding = 0n
  let i = 0
  for (let shift = 0n; ; shift += 7n) {
    const byte = digest[i++]
    padding |= BigInt(byte & 0x7f) << shift
    if (byte < 0x80) break
  }
  const height = BigInt(digest[i])
  return (1n << height) - (((128n * padding) / 127n) >> 5n)
}

/** A copy goes to a data set of ours (its reserve, fees owed and size as the view and verifier have them) or to a new one. */
export type CopyTarget = { kind: 'new' } | { kind: 'existing'; leafCount: bigint; lifecycleReserve: bigint; pendingFees: bigint }

export interface CopyCost {
  /** USDFC that must be available in Filecoin Pay for it (locked, or paid as a fee). */
  needed: bigint
  /** What it adds to the account's lockup rate. */
  rateDelta: bigint
}

/** What the reserve needs raised by before `owed` is paid from it: back to the target plus what is owed, when it would fall under the threshold. */
function replenishment(p: GaPrices, reserve: bigint, owed: bigint): bigint {
  return reserve < owed + p.replenishThreshold ? p.lifecycleReserveTarget + owed - reserve : 0n
}

/** Rails.sol validatePayerOperatorApprovalAndFunds: what must be available, before any rail opens, to create a data set (the reserve and a lockup period of the data set fee). */
export const creationLockup = (p: GaPrices): bigint =>
  p.lifecycleReserveTarget + (p.datasetFeePerMonth * p.defaultLockupPeriod) / EPOCHS_PER_MONTH

/**
 * One copy of a piece of `leaves` leaves, added as one piece: a new data set locks the reserve and
 * pays the creation and add fees out of it, plus 30 days of its rate (size and data set fee); an
 * existing one pays the add fee from its reserve (raised first when it would run low) and locks 30
 * days of the rate it adds. Either way the piece's removal fee later, and what the removal would
 * take to top the reserve up again.
 */
export function copyCost(p: GaPrices, target: CopyTarget, leaves: bigint): CopyCost {
  const addFee = p.addPiecesBaseFee + p.addPiecesPerPieceFee
  if (target.kind === 'new') {
    const rate = storageRate(p, leaves)
    const atCreation = creationLockup(p)
    const locked = p.lifecycleReserveTarget + rate * p.defaultLockupPeriod
    const reserveLeft = p.lifecycleReserveTarget - p.createDataSetFee - addFee
    const removal = p.schedulePieceRemovalsFee + replenishment(p, reserveLeft, p.schedulePieceRemovalsFee)
    return { needed: (atCreation > locked ? atCreation : locked) + removal, rateDelta: rate }
  }
  const owed = target.pendingFees + addFee
  const raise = replenishment(p, target.lifecycleReserve, owed)
  const reserveLeft = (raise > 0n ? p.lifecycleReserveTarget + owed : target.lifecycleReserve) - owed
  const rateDelta = storageRate(p, target.leafCount + leaves) - storageRate(p, target.leafCount)
  const removal = p.schedulePieceRemovalsFee + replenishment(p, reserveLeft, p.schedulePieceRemovalsFee)
  return { needed: raise + rateDelta * p.defaultLockupPeriod + removal, rateDelta }
}

/**
 * What the account needs available for all the copies at once: each copy's cost, and `marginEpochs`
 * of the account's lockup rate after them, which Filecoin Pay keeps moving into lockup while the
 * copies are made (the SDK's buffer is 5 epochs; a store of several copies takes longer).
 */
export function copiesCost(
  p: GaPrices,
  targets: CopyTarget[],
  leaves: bigint,
  accountRate: bigint,
  marginEpochs: bigint,
): { required: bigint; rateDelta: bigint } {
  let required = 0n
  let rateDelta = 0n
  for (const target of targets) {
    const cost = copyCost(p, target, leaves)
    required += cost.needed
    rateDelta += cost.rateDelta
  }
  return { required: required + (accountRate + rateDelta) * marginEpochs, rateDelta }
}
