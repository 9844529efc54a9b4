import { getChain, type Chain } from '@filoz/synapse-core/chains'
import type { Abi, Address } from 'viem'
import type { FocContracts } from '../../shared/foc-contracts.ts'
import { fwssViewAbi } from './abi.ts'
import type { FocDeployment } from './deployment.ts'

// The address-file shape lives in server/shared, as the simulated Onchain Cloud writes it too.
export type { FocContracts } from '../../shared/foc-contracts.ts'

export type FocNetwork = 'mainnet' | 'calibration' | 'devnet'

/**
 * The one devnet chain id Synapse SDK 0.41 takes (synapse-core chains.ts asChain, FilOzone
 * foc-devnet's); beside it the SDK takes only mainnet's 314 and calibration's 314159.
 */
export const SDK_DEVNET_CHAIN_ID = 31_415_926

/** The chain ids the client may store on for each network: the network's own (the SDK takes no other devnet id). */
export const FOC_CHAIN_IDS: Record<FocNetwork, number> = { mainnet: 314, calibration: 314_159, devnet: SDK_DEVNET_CHAIN_ID }

/**
 * The view contract's ABI the SDK reads with: its own (FWSS 1.2.1's) with every function the GA
 * view (1.3.1) has replaced by the GA one. DEPARTURE from SDK 0.41: its data set view has 11
 * fields where GA's has 13 (pendingOneTimePayments and lifecycleReserveBalance before
 * dataSetId), so its getDataSet and getClientDataSets read garbage from the second data set on;
 * every SDK read of the view goes through `chain.contracts.fwssView.abi`, so the SDK's own
 * provider and data set selection inside `store` decodes GA's data sets with this. Our own reads
 * never go through the SDK (data-sets.ts). A newer SDK that ships GA's ABI makes this a no-op.
 */
export function gaFwssViewAbi(sdkAbi: Abi): Abi {
  const ours = new Set<string>(fwssViewAbi.filter((x) => x.type === 'function').map((x) => x.name))
  const kept = sdkAbi.filter((x) => !(x.type === 'function' && ours.has(x.name)))
  return [...kept, ...fwssViewAbi]
}

/**
 * The Synapse SDK's description of the chain we store on: the SDK's own
 * entry for the chain id (its name and the contracts' ABIs) with every
 * address as the chain itself names it now (`deployment`, read from FWSS:
 * deployment.ts), never the addresses the SDK shipped with, which upgrades
 * leave behind; our RPC endpoint; GA's view ABI (gaFwssViewAbi).
 */
export function focChain(deployment: FocDeployment, rpcUrl: string, genesisTimestamp?: number): Chain {
  const base = getChain(deployment.chainId)
  const at = <K extends keyof Chain['contracts']>(key: K, address: Address) => ({ ...base.contracts[key], address })
  const c: FocContracts = deployment.contracts
  return {
    ...base,
    ...(deployment.chainId === SDK_DEVNET_CHAIN_ID ? { name: 'Filecoin Onchain Cloud devnet', filbeam: null } : {}),
    rpcUrls: { default: { http: [rpcUrl] } },
    genesisTimestamp: genesisTimestamp ?? base.genesisTimestamp,
    contracts: {
      multicall3: { address: c.multicall3, blockCreated: 0 },
      usdfc: at('usdfc', c.usdfc),
      filecoinPay: at('filecoinPay', c.filecoinPay),
      fwss: at('fwss', c.fwss),
      fwssView: { address: c.fwssView, abi: gaFwssViewAbi(base.contracts.fwssView.abi as Abi) },
      serviceProviderRegistry: at('serviceProviderRegistry', c.serviceProviderRegistry),
      sessionKeyRegistry: at('sessionKeyRegistry', c.sessionKeyRegistry),
      pdp: at('pdp', c.pdp),
      endorsements: at('endorsements', c.endorsements),
    },
  } as unknown as Chain
}
