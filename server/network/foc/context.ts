import type { Chain } from '@filoz/synapse-core/chains'
import type { Synapse } from '@filoz/synapse-sdk'
import type { Address } from 'viem'

/**
 * What the client's verbs work with, built once by createFocClient. Each verb
 * takes only the part it uses (a `Pick` of this), so that one can be swapped
 * for code that skips the SDK: the chain reads need no Synapse instance.
 */
export interface FocContext {
  synapse: Synapse
  /** The SDK's viem client: chain reads, receipts, and the payer's own transactions. */
  client: Synapse['client']
  chain: Chain
  /** The payer: the wallet key's FEVM account. */
  payer: Address
  /** The `source` metadata the SDK gives our data sets (Synapse.create's `source`). */
  source: string
}

/** A contract on `chain.contracts`, as viem's readContract wants it. */
export interface FocContract {
  address: Address
  abi: unknown
}

/**
 * A view call on one of the chain's contracts, by function name: viem's typed
 * readContract takes no plain string for it, so the caller names the answer's type.
 *
 * @example const read = contractReader(client); const live = await read<boolean>(chain.contracts.pdp, 'dataSetLive', [dataSetId])
 */
export const contractReader =
  (client: FocContext['client']) =>
  <T>(contract: FocContract, functionName: string, args: unknown[] = []) =>
    client.readContract({ address: contract.address, abi: contract.abi, functionName, args } as never) as Promise<T>

/** One view call for {@link contractSnapshot}: the contract, the function and its arguments. */
export type FocRead = [contract: FocContract, functionName: string, args?: unknown[]]

/**
 * Several view calls answered from one block: viem batches them into
 * eth_calls of Multicall3 (the chain's `multicall3`), so a proof landing between
 * two reads cannot make them disagree. With `blockNumber` every snapshot taken
 * through it reads that block (viem splits a long batch into several eth_calls,
 * and a caller may take two snapshots): all describe one block. A call that
 * reverts answers undefined.
 *
 * @example const [live, last] = await contractSnapshot(client)([pdp, 'dataSetLive', [id]], [pdp, 'getDataSetLastProvenEpoch', [id]])
 */
export const contractSnapshot =
  (client: FocContext['client'], at: { blockNumber?: bigint } = {}) =>
  async (...reads: FocRead[]): Promise<unknown[]> => {
    const answers = await client.multicall({
      contracts: reads.map(([contract, functionName, args = []]) => ({ address: contract.address, abi: contract.abi, functionName, args })),
      allowFailure: true,
      ...(at.blockNumber === undefined ? {} : { blockNumber: at.blockNumber }),
    } as never)
    return (answers as { status: string; result?: unknown }[]).map((a) => (a.status === 'success' ? a.result : undefined))
  }
