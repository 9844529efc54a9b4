import { getEndorsedProviderIds } from '@filoz/synapse-core/endorsements'
import * as Pay from '@filoz/synapse-core/pay'
import { getApprovedPDPProviders } from '@filoz/synapse-core/sp-registry'
import { EPOCHS_PER_DAY } from '../../shared/epochs.ts'
import { filecoinPayAbi, fwssViewAbi } from './abi.ts'
import type { FocContext } from './context.ts'
import { copiesCost, pieceLeaves, type CopyTarget, type GaPrices } from './cost.ts'
import { dataSets } from './data-sets.ts'
import type { FocDataSet, FocFunding, FocFundingRequest } from './types.ts'

/** A day of the account's rate after the copies: what runs into lockup while they are made, and then some. */
const MARGIN_EPOCHS = BigInt(EPOCHS_PER_DAY)

/**
 * Whether the payer can pay for `dataSize` more bytes in `copies` copies, by GA's charges (cost.ts),
 * for the copies `store` would make: to a data set of ours where the SDK would add to one, else to
 * a new one. DEPARTURE from SDK 0.41 (storage.prepare): its cost model is not GA's (cost.ts) and
 * its data set reads decode 11 fields of GA's 13; this reads GA's price list, our data sets
 * (data-sets.ts) and the account through the contracts' ABIs (abi.ts).
 */
export async function funding(
  c: Pick<FocContext, 'client' | 'chain' | 'payer' | 'source'>,
  dataSize: number,
  o: FocFundingRequest = {},
): Promise<FocFunding> {
  const { client, chain, payer } = c
  const [prices, account, approved, ours, providers, endorsed] = await Promise.all([
    priceList(c),
    client.readContract({
      address: chain.contracts.filecoinPay.address,
      abi: filecoinPayAbi,
      functionName: 'getAccountInfoIfSettled',
      args: [chain.contracts.usdfc.address, payer],
    }),
    Pay.isFwssMaxApproved(client, { clientAddress: payer }),
    dataSets(c),
    getApprovedPDPProviders(client),
    getEndorsedProviderIds(client),
  ])
  const [, , availableFunds, lockupRate] = account
  const requested = { ...(o.metadata ?? {}), ...(c.source && !('source' in (o.metadata ?? {})) ? { source: c.source } : {}) }
  const targets = plannedTargets({
    copies: o.copies ?? 1,
    providerIds: providers.map((p) => Number(p.id)),
    endorsedIds: endorsed.map(Number),
    excluded: o.excludeProviderIds ?? [],
    dataSets: ours,
    metadata: requested,
  })
  const { required, rateDelta } = copiesCost(prices, targets, pieceLeaves(dataSize), lockupRate, MARGIN_EPOCHS)
  const depositNeeded = required > availableFunds ? required - availableFunds : 0n
  return {
    ready: depositNeeded === 0n && approved,
    depositNeeded,
    needsApproval: !approved,
    ratePerEpoch: rateDelta,
    required,
    newDataSets: targets.filter((t) => t.kind === 'new').length,
    rates: { storagePerTibPerMonth: prices.storagePerTibPerMonth, datasetFeePerMonth: prices.datasetFeePerMonth },
  }
}

/** GA's price list (FilecoinWarmStorageServiceStateView 1.3.1 getPriceList, src/lib/PriceList.sol). */
export async function priceList({ client, chain }: Pick<FocContext, 'client' | 'chain'>): Promise<GaPrices> {
  const list = await client.readContract({ address: chain.contracts.fwssView.address, abi: fwssViewAbi, functionName: 'getPriceList' })
  return {
    storagePerTibPerMonth: list.rates.storagePerTibPerMonth,
    datasetFeePerMonth: list.rates.datasetFeePerMonth,
    createDataSetFee: list.fees.createDataSetFee,
    addPiecesBaseFee: list.fees.addPiecesBaseFee,
    addPiecesPerPieceFee: list.fees.addPiecesPerPieceFee,
    schedulePieceRemovalsFee: list.fees.schedulePieceRemovalsFee,
    lifecycleReserveTarget: list.lockups.lifecycleReserveTarget,
    replenishThreshold: list.lockups.replenishThreshold,
    defaultLockupPeriod: list.lockups.defaultLockupPeriod,
  }
}

/** Same keys, same values (synapse-core warm-storage metadataMatches). */
const sameMetadata = (a: Record<string, string>, b: Record<string, string>) =>
  Object.keys(a).length === Object.keys(b).length && Object.keys(b).every((k) => a[k] === b[k])

/**
 * Where the SDK's upload puts each copy (synapse-sdk StorageContext.smartSelect and synapse-core
 * selectProviders): the first copy on an endorsed provider, each copy on a provider not excluded or
 * taken yet, to a live data set of ours with the same metadata when there is one (those holding
 * pieces first, then the oldest), else a new data set on the first such provider. A provider that
 * fails the SDK's ping is passed over, so this can differ; the gateway's margin is for that.
 */
export function plannedTargets(o: {
  copies: number
  providerIds: number[]
  endorsedIds: number[]
  excluded: number[]
  dataSets: FocDataSet[]
  metadata: Record<string, string>
}): CopyTarget[] {
  const taken = new Set(o.excluded)
  const matching = o.dataSets
    .filter((d) => d.live && d.managed && d.pdpEndEpoch === 0n && sameMetadata(d.metadata, o.metadata))
    .sort((a, b) => Number(b.activePieceCount > 0n) - Number(a.activePieceCount > 0n) || Number(a.dataSetId - b.dataSetId))
  const targets: CopyTarget[] = []
  for (let i = 0; i < o.copies; i++) {
    const pool = o.providerIds.filter((id) => !taken.has(id) && (i > 0 || o.endorsedIds.length === 0 || o.endorsedIds.includes(id)))
    if (pool.length === 0) break
    const existing = matching.find((d) => pool.includes(d.providerId))
    const providerId = existing?.providerId ?? pool[0]
    taken.add(providerId)
    targets.push(
      existing
        ? {
            kind: 'existing',
            leafCount: existing.leafCount,
            lifecycleReserve: existing.lifecycleReserve,
            pendingFees: existing.pendingFees,
          }
        : { kind: 'new' },
    )
  }
  return targets
}
