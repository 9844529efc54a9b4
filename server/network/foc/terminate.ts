import type { Hash } from 'viem'
import { simulateContract, waitForTransactionReceipt, writeContract } from 'viem/actions'
import { NetworkError } from '../errors.ts'
import { fwssAbi, fwssViewAbi } from './abi.ts'
import { contractReader, type FocContext } from './context.ts'

/**
 * Ends the payments of one of our data sets from the payer's side: FWSS
 * 1.3.1 `terminateService(dataSetId)` (service_contracts/src/FilecoinWarmStorageService.sol,
 * the form without extraData, which the payer or the provider may send)
 * terminates the data set's PDP rail in Filecoin Pay, which stops paying
 * at the rail's end epoch (now plus its lockup period, already set aside)
 * whatever the provider does. Used when the provider is gone and cannot be
 * asked to remove a piece. Resolves with the transaction once it succeeded,
 * or undefined when nothing is left to end: the data set's payments were
 * terminated already (pdpEndEpoch set) or it was deleted (FWSS forgets a
 * deleted data set's rails: pdpRailId 0).
 */
export async function terminateDataSet(
  { client, chain }: Pick<FocContext, 'client' | 'chain'>,
  dataSetId: bigint,
): Promise<Hash | undefined> {
  const { fwss, fwssView } = chain.contracts
  const read = contractReader(client)
  const info = await read<{ pdpRailId: bigint; pdpEndEpoch: bigint }>({ address: fwssView.address, abi: fwssViewAbi }, 'getDataSet', [
    dataSetId,
  ])
  if (info.pdpRailId === 0n || info.pdpEndEpoch !== 0n) return undefined
  const { request } = await simulateContract(client, {
    address: fwss.address,
    abi: fwssAbi,
    functionName: 'terminateService',
    args: [dataSetId],
    account: client.account,
    chain: client.chain,
  })
  const hash = await writeContract(client, request)
  const receipt = await waitForTransactionReceipt(client, { hash })
  if (receipt.status !== 'success') throw new NetworkError('REJECTED_BY_CHAIN', `terminateService(${dataSetId}) ${hash} failed on chain`)
  return hash
}
