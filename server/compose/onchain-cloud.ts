import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Chain } from '@filoz/synapse-core/chains'
import { createPublicClient, http } from 'viem'
import { ConfigError, type Config } from '../shared/config.ts'
import { focChain, type FocContracts } from '../network/foc/chain.ts'

/**
 * The Filecoin Onchain Cloud the gateway stores on, as the Synapse SDK's
 * Chain: FOC_RPC_URL on NETWORK=mainnet or calibration (the contracts' published
 * addresses, as the SDK ships them); otherwise the simulated one `npm start`
 * runs, found like any devnet: its RPC (SIMFOC_RPC_URL) and the addresses it
 * deployed to (DATA_DIR/simfoc/contracts.json), its genesis read from block 0.
 */
export async function onchainCloudChain(config: Config): Promise<Chain> {
  const { rpcUrl: focRpcUrl, simulatedRpcUrl } = config.onchainCloud
  if (focRpcUrl) {
    const network = config.service.network
    if (network !== 'mainnet' && network !== 'calibration') {
      throw new ConfigError(`FOC_RPC_URL is a real Onchain Cloud: set NETWORK=calibration or mainnet (it is ${network})`)
    }
    return focChain(network, focRpcUrl)
  }
  const file = join(config.files.simfoc, 'contracts.json')
  let contracts: FocContracts
  try {
    contracts = JSON.parse(readFileSync(file, 'utf8')) as FocContracts
  } catch {
    throw new ConfigError(
      `no simulated Onchain Cloud in ${config.files.simfoc}: start the stack (npm start) first, or set FOC_RPC_URL for a real one`,
    )
  }
  const rpcUrl = simulatedRpcUrl
  const genesis = await createPublicClient({ transport: http(rpcUrl, { retryCount: 0, timeout: 10_000 }) })
    .getBlock({ blockNumber: 0n })
    .catch(() => {
      throw new ConfigError(`the simulated Onchain Cloud does not answer at ${rpcUrl}: is the stack running (npm start)? (SIMFOC_RPC_URL)`)
    })
  return focChain('devnet', rpcUrl, { contracts, genesisTimestamp: Number(genesis.timestamp) })
}
