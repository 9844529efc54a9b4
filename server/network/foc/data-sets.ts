import { isAddressEqual, type Address } from 'viem'
import { fwssViewAbi, pdpVerifierAbi } from './abi.ts'
import type { FocContext } from './context.ts'
import type { FocDataSet } from './types.ts'

/**
 * The payer's data sets with the warm storage service, read with GA's ABI (abi.ts) and never
 * through the SDK. DEPARTURE from SDK 0.41: its getClientDataSets decodes the view's data set as
 * 11 fields where GA's has 13 (FilecoinWarmStorageServiceStateView 1.3.1 getClientDataSets), so
 * from the second data set on it reads garbage. Each is completed from PDPVerifier 3.4.0 (whether
 * it is live, its leaves and pieces; a deleted one reverts DataSetNotLive, hence `live` first) and
 * the view (its metadata).
 */
export async function dataSets({ client, chain, payer }: Pick<FocContext, 'client' | 'chain' | 'payer'>): Promise<FocDataSet[]> {
  const { fwssView, pdp, fwss } = chain.contracts
  const infos = await client.readContract({ address: fwssView.address, abi: fwssViewAbi, functionName: 'getClientDataSets', args: [payer] })
  return Promise.all(
    infos.map(async (info): Promise<FocDataSet> => {
      const dataSetId = info.dataSetId
      const pdpRead = <F extends 'dataSetLive' | 'getDataSetLeafCount' | 'getActivePieceCount' | 'getDataSetListener'>(functionName: F) =>
        client.readContract({ address: pdp.address, abi: pdpVerifierAbi, functionName, args: [dataSetId] } as never) as Promise<
          F extends 'dataSetLive' ? boolean : F extends 'getDataSetListener' ? Address : bigint
        >
      const [live, [keys, values]] = await Promise.all([
        pdpRead('dataSetLive'),
        client.readContract({ address: fwssView.address, abi: fwssViewAbi, functionName: 'getAllDataSetMetadata', args: [dataSetId] }),
      ])
      const [leafCount, activePieceCount, listener] = live
        ? await Promise.all([pdpRead('getDataSetLeafCount'), pdpRead('getActivePieceCount'), pdpRead('getDataSetListener')])
        : [0n, 0n, fwss.address]
      return {
        dataSetId,
        providerId: Number(info.providerId),
        clientDataSetId: info.clientDataSetId,
        pdpRailId: info.pdpRailId,
        pdpEndEpoch: info.pdpEndEpoch,
        payer: info.payer,
        serviceProvider: info.serviceProvider,
        pendingFees: info.pendingOneTimePayments,
        lifecycleReserve: info.lifecycleReserveBalance,
        live,
        managed: isAddressEqual(listener as Address, fwss.address),
        leafCount: leafCount as bigint,
        activePieceCount: activePieceCount as bigint,
        metadata: Object.fromEntries(keys.map((key, i) => [key, values[i]])),
      }
    }),
  )
}
