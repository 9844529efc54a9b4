import { calibration, devnet, mainnet, type Chain } from '@filoz/synapse-core/chains'
import type { Address } from 'viem'
import type { FocContracts } from '../../shared/foc-contracts.ts'

// The address-file shape lives in server/shared, as the simulated Onchain Cloud writes it too.
export type { FocContracts } from '../../shared/foc-contracts.ts'

export type FocNetwork = 'mainnet' | 'calibration' | 'devnet'

/**
 * The Synapse SDK's description of the chain we store on: mainnet's or
 * calibration's as the SDK ships them (their contracts' published addresses),
 * with our RPC endpoint; or a devnet's, whose contracts are wherever it
 * deployed them (synapse-core src/devnet toChain builds the same shape from a
 * FOC devnet's info file).
 */
export function focChain(network: FocNetwork, rpcUrl: string, deployed?: { contracts: FocContracts; genesisTimestamp: number }): Chain {
  const base = network === 'mainnet' ? mainnet : network === 'calibration' ? calibration : devnet
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
