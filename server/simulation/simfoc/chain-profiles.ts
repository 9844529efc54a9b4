import type { Address } from 'viem'
import { SIMFOC_CHAIN_ID } from './evm-node.ts'

/**
 * Which network the simulated Onchain Cloud stands as (SIMFOC_CHAIN). A
 * devnet's contracts are wherever its deployer's nonce puts them, under the
 * chain id the Synapse SDK knows as the FOC devnet's. Calibration and mainnet
 * are stood as they are today: their chain id, and at the addresses a client
 * may know without asking the chain, the contracts that are there: the warm
 * storage service's proxy and the endorsement set (filecoin-services
 * service_contracts/deployments.json, FWSS_PROXY_ADDRESS and
 * ENDORSEMENT_SET_ADDRESS under "314159" and "314"), Multicall3 at its
 * canonical address (mds1/multicall's deployments, the same on every chain),
 * and the state view FWSS 1.2.0 was deployed with (deployments.json at v1.2.0
 * and v1.2.1, FWSS_VIEW_ADDRESS), where synapse-core 0.5.2 still looks for the
 * view although FWSS was migrated away from it for 1.3.0. Every other contract
 * lands wherever it lands, so that only a client that asks FWSS finds it.
 */
export interface SimfocChainProfile {
  chainId: number
  /** Published addresses; none on a devnet. */
  fixed?: FixedAddresses
}

export interface FixedAddresses {
  fwss: Address
  endorsements: Address
  multicall3: Address
  /** The 1.2.0 state view's. */
  fwssView120: Address
}

export const SIMFOC_CHAIN_PROFILES = {
  devnet: { chainId: SIMFOC_CHAIN_ID },
  calibration: {
    chainId: 314_159,
    fixed: {
      fwss: '0x02925630df557F957f70E112bA06e50965417CA0',
      endorsements: '0xAA2f7CfC7ecAc616EC9C1f6d700fAd19087FAC84',
      multicall3: '0xcA11bde05977b3631167028862bE2a173976CA11',
      fwssView120: '0x537320bd004a7FDd3c1932ca64BD88268301322A',
    },
  },
  mainnet: {
    chainId: 314,
    fixed: {
      fwss: '0x8408502033C418E1bbC97cE9ac48E5528F371A9f',
      endorsements: '0x59eFa2e8324E1551d46010d7B0B140eE2F5c726b',
      multicall3: '0xcA11bde05977b3631167028862bE2a173976CA11',
      fwssView120: '0xB1B3A3d979c1f233c1021EF98dff9c0932FF1bb9',
    },
  },
} as const satisfies Record<string, SimfocChainProfile>

export type SimfocChainName = keyof typeof SIMFOC_CHAIN_PROFILES

export class SimfocChainMismatch extends Error {
  override name = 'SimfocChainMismatch'
}
