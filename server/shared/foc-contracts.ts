import type { Address } from 'viem'

/**
 * Where a Filecoin Onchain Cloud's contracts are: what a devnet (and the
 * simulated one, in `<DATA_DIR>/simfoc/contracts.json`) publishes at start.
 * The simulation writes it; the Onchain Cloud client reads it.
 */
export interface FocContracts {
  multicall3: Address
  usdfc: Address
  filecoinPay: Address
  fwss: Address
  fwssView: Address
  serviceProviderRegistry: Address
  sessionKeyRegistry: Address
  pdp: Address
  endorsements: Address
}
