/**
 * The networks a gateway and its app can be linked to. `devnet`: a local
 * Lotus-compatible node (a Lotus or Boost devnet, our simulated chain served
 * alone), whose genesis and block time are read from the node at start.
 */
export const NETWORK_NAMES = ['simnet', 'mainnet', 'calibration', 'devnet'] as const

export type NetworkName = (typeof NETWORK_NAMES)[number]
