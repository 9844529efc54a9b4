import type { Address } from 'viem'
import type { FocAnchors } from './deployment.ts'

/** Multicall3's one address on every EVM chain it was deployed to by its keyless transaction (mds1/multicall3 README). */
export const MULTICALL3: Address = '0xcA11bde05977b3631167028862bE2a173976CA11'

/**
 * Where to start reading a public network's Onchain Cloud, from its operator's
 * published deployments (FilOzone/filecoin-services service_contracts/deployments.json,
 * FWSS_PROXY_ADDRESS and ENDORSEMENT_SET_ADDRESS per chain id). Only what FWSS
 * cannot tell: its own proxy (which upgrades keep in place), the endorsement set
 * (no FWSS getter names it) and Multicall3 (the same address on every EVM
 * chain). Every other address is read from FWSS on chain (deployment.ts), never
 * taken from here or from the Synapse SDK, whose copies are a snapshot of its release.
 */
export const PUBLISHED_ANCHORS: Record<'mainnet' | 'calibration', FocAnchors & { chainId: number }> = {
  mainnet: {
    chainId: 314,
    fwss: '0x8408502033C418E1bbC97cE9ac48E5528F371A9f',
    endorsements: '0x59eFa2e8324E1551d46010d7B0B140eE2F5c726b',
    multicall3: MULTICALL3,
  },
  calibration: {
    chainId: 314_159,
    fwss: '0x02925630df557F957f70E112bA06e50965417CA0',
    endorsements: '0xAA2f7CfC7ecAc616EC9C1f6d700fAd19087FAC84',
    multicall3: MULTICALL3,
  },
}
