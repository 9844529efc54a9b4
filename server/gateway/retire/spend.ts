import { decodeClientDealProposal } from '../../network/boost/wire.ts'
import { EPOCHS_PER_MONTH, pieceCidLeaves, storageRate, type GaRates } from '../../network/foc/cost.ts'
import type { Sql } from '../../shared/sql/index.ts'
import type { RouteName } from '../deals/types.ts'
import type { GroupUsage } from './usage.ts'

type Liveness = GroupUsage['liveness']

/**
 * What the PDP copies cost a month (USDFC, 18 decimals), now and once the dead groups are retired. Each data set
 * pays its own rate (FWSS 1.3.x calculateStorageRate: its leaves' raw size at the TiB price plus the data set fee,
 * none when empty), so the saving is the difference of the data sets' rates with and without the dead groups' pieces.
 */
export interface PdpSpend {
  /** The prices the gateway last read from the warm storage service; without them no amount can be given. */
  rates?: GaRates & { seenMs: number }
  /** Copies paid for now: pieces in our data sets (published or proved). */
  copies: number
  dataSets: number
  /** Copies whose piece CID is not a v2 one (its size unknown): not in the amounts. */
  unsized: number
  perMonthNow?: bigint
  savedPerMonth?: bigint
  perMonthAfter?: bigint
}

/** Deal-market deals of groups of one liveness: FIL (attoFIL) a month, and the last epoch one of them is paid for. */
export interface MarketShare {
  deals: number
  perMonth: bigint
  paidUntilEpoch?: number
}

/**
 * What the deal-market deals cost a month (attoFIL), by their groups' liveness. A deal is paid its proposal's
 * StoragePricePerEpoch each epoch until its end epoch and cannot be cancelled: retiring a group saves nothing on
 * its deals now, only their renewal.
 */
export interface MarketSpend {
  perMonthNow: bigint
  byLiveness: Record<Liveness, MarketShare>
  /** Deals on chain without a recorded signed proposal (made before proposals were kept): not in the amounts. */
  unpriced: number
}

/** A piece's leaves, from its v2 piece CID; undefined for any other CID. */
function leavesOf(pieceCid: string): bigint | undefined {
  try {
    return pieceCidLeaves(pieceCid)
  } catch {
    return undefined
  }
}

export interface StorageSpend {
  pdp: PdpSpend
  market: MarketSpend
}

/**
 * The monthly spend of the copies still paid for (published or active), from the gateway's records alone: the
 * market deals' signed proposals, and for PDP copies their pieces' leaves (read from their v2 piece CIDs, as
 * PDPVerifier counts them) priced at the storage prices the gateway recorded when it last estimated an upload.
 * A month is FWSS's: 86 400 epochs (30 days), on both routes.
 */
export async function storageSpend(sql: Sql, groups: GroupUsage[], rates?: PdpSpend['rates']): Promise<StorageSpend> {
  const livenessOf = new Map(groups.map((g) => [g.groupId, g.liveness]))
  const liveness = (groupId: number): Liveness => livenessOf.get(Number(groupId)) ?? 'live'
  return { pdp: await pdpSpend(sql, liveness, rates), market: await marketSpend(sql, liveness) }
}

/** The copies of one route still paid for, oldest first. */
const paidFor = <R>(sql: Sql, route: RouteName, columns: string) =>
  sql.all<R>(`SELECT group_id, ${columns} FROM group_deals WHERE route = ? AND state IN ('published', 'active') ORDER BY id`, [route])

async function pdpSpend(sql: Sql, liveness: (groupId: number) => Liveness, rates?: PdpSpend['rates']): Promise<PdpSpend> {
  const rows = await paidFor<{ group_id: number; piece_cid: string; data_set_id: number | null }>(sql, 'pdp', 'piece_cid, data_set_id')
  /** Per data set: the leaves of every piece paid for now, and of the live groups' only. */
  const dataSets = new Map<number, { now: bigint; after: bigint }>()
  let copies = 0
  let unsized = 0
  for (const r of rows) {
    if (r.data_set_id == null) continue
    const leaves = leavesOf(r.piece_cid)
    if (leaves === undefined) {
      unsized++
      continue
    }
    const set = dataSets.get(Number(r.data_set_id)) ?? { now: 0n, after: 0n }
    set.now += leaves
    if (liveness(r.group_id) === 'live') set.after += leaves
    dataSets.set(Number(r.data_set_id), set)
    copies++
  }
  const pdp: PdpSpend = { ...(rates ? { rates } : {}), copies, dataSets: dataSets.size, unsized }
  if (!rates) return pdp
  let now = 0n
  let after = 0n
  for (const set of dataSets.values()) {
    now += storageRate(rates, set.now) * EPOCHS_PER_MONTH
    after += storageRate(rates, set.after) * EPOCHS_PER_MONTH
  }
  return { ...pdp, perMonthNow: now, savedPerMonth: now - after, perMonthAfter: after }
}

async function marketSpend(sql: Sql, liveness: (groupId: number) => Liveness): Promise<MarketSpend> {
  const rows = await paidFor<{ group_id: number; signed_proposal: Uint8Array | null }>(sql, 'market', 'signed_proposal')
  const share = (): MarketShare => ({ deals: 0, perMonth: 0n })
  const market: MarketSpend = { perMonthNow: 0n, byLiveness: { live: share(), dead: share(), retired: share() }, unpriced: 0 }
  for (const r of rows) {
    if (!r.signed_proposal) {
      market.unpriced++
      continue
    }
    // Only the amount and the end epoch are read: the addresses' network letter does not matter here.
    const { proposal } = decodeClientDealProposal(new Uint8Array(r.signed_proposal), 'mainnet')
    const perMonth = BigInt(proposal.StoragePricePerEpoch) * EPOCHS_PER_MONTH
    const s = market.byLiveness[liveness(r.group_id)]
    s.deals++
    s.perMonth += perMonth
    s.paidUntilEpoch = Math.max(s.paidUntilEpoch ?? 0, proposal.EndEpoch)
    market.perMonthNow += perMonth
  }
  return market
}
