import { calibration, devnet, mainnet, type Chain } from '@filoz/synapse-core/chains'
import type { Abi, Address } from 'viem'
import type { FocContracts } from '../../shared/foc-contracts.ts'
import { fwssViewAbi } from './abi.ts'

// The address-file shape lives in server/shared, as the simulated Onchain Cloud writes it too.
export type { FocContracts } from '../../shared/foc-contracts.ts'

export type FocNetwork = 'mainnet' | 'calibration' | 'devnet'

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
 * The Synapse SDK's description of the chain we store on: mainnet's or
 * calibration's as the SDK ships them (their contracts' published addresses),
 * with our RPC endpoint; or a devnet's, whose contracts are wherever it
 * deployed them (synapse-core src/devnet toChain builds the same shape from a
 * FOC devnet's info file). Either way with GA's view ABI (gaFwssViewAbi).
 */
export function focChain(network: FocNetwork, rpcUrl: string, deployed?: { contracts: FocContracts; genesisTimestamp: number }): Chain {
  const sdkBase = network === 'mainnet' ? mainnet : network === 'calibration' ? calibration : devnet
  const fwssView = { ...sdkBase.contracts.fwssView, abi: gaFwssViewAbi(sdkBase.contracts.fwssView.abi as Abi) }
  const base = { ...sdkBase, contracts: { ...sdkBase.contracts, fwssView } } as Chain
  const rpcUrls = { default: { http: [rpcUrl] } }
  if (network !== 'devnet') return { ...base, rpcUrls }
  if (!deployed) throw new Error('a devnet chain needs the addresses of its contracts')
  const { contracts: c } = deployed
  const at = <K extends keyof Chain['contracts']>(key: K, address: Address) => ({ ...base.contracts[key], address })
  return {
    ...base,
    name: 'Filecoin Onchain Cloud devnet',
    rpcUrls,
    genesisTimestamp: deployed.genesisTimestamp,
    filbeam: null,
    contracts: {
      multicall3: { address: c.multicall3, blockCreated: 0 },
      usdfc: at('usdfc', c.usdfc),
      filecoinPay: at('filecoinPay', c.filecoinPay),
      fwss: at('fwss', c.fwss),
      fwssView: at('fwssView', c.fwssView),
      serviceProviderRegistry: at('serviceProviderRegistry', c.serviceProviderRegistry),
      sessionKeyRegistry: at('sessionKeyRegistry', c.sessionKeyRegistry),
      pdp: at('pdp', c.pdp),
      endorsements: at('endorsements', c.endorsements),
    },
  }
}
