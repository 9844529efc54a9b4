import { existsSync, readFileSync } from 'node:fs'
import type { Chain } from '@filoz/synapse-core/chains'
import { join } from 'node:path'
import { createPublicClient, http } from 'viem'
import { ConfigError, type Config } from '../shared/config.ts'
import { focChain } from '../network/foc/chain.ts'
import { parseFocContracts } from '../network/foc/contracts-file.ts'

/** The one devnet chain id Synapse SDK 0.41 takes (synapse-core chains.ts asChain), foc-devnet's. */
const SDK_DEVNET_CHAIN_ID = 31415926

/**
 * The Filecoin Onchain Cloud the gateway stores on, as the Synapse SDK's
 * Chain: FOC_RPC_URL on NETWORK=mainnet or calibration (the contracts'
 * published addresses, as the SDK ships them); FOC_RPC_URL on NETWORK=devnet
 * with the addresses in FOC_CONTRACTS; otherwise the simulated one
 * `npm start` runs, found like any devnet: its RPC (SIMFOC_RPC_URL) and the
 * addresses it deployed to (DATA_DIR/simfoc/contracts.json).
 */
export async function onchainCloudChain(config: Config): Promise<Chain> {
  const { rpcUrl: focRpcUrl, contractsFile, simulatedRpcUrl } = config.onchainCloud
  const network = config.service.network
  if (focRpcUrl && (network === 'mainnet' || network === 'calibration')) return focChain(network, focRpcUrl)
  if (focRpcUrl) return devnetChain(focRpcUrl, contractsFile!, 'FOC_RPC_URL', 'FOC_CONTRACTS')
  const file = join(config.files.simfoc, 'contracts.json')
  if (!existsSync(file)) {
    throw new ConfigError(
      `no simulated Onchain Cloud in ${config.files.simfoc}: start the stack (npm start) first, or set FOC_RPC_URL for a real one`,
    )
  }
  return devnetChain(simulatedRpcUrl, file, 'SIMFOC_RPC_URL', `the simulated Onchain Cloud's ${file}`, ' (is the stack running? npm start)')
}

/** A devnet's chain: the contracts where its file says, its genesis from block 0, its chain id checked. */
async function devnetChain(rpcUrl: string, file: string, rpcName: string, fileName: string, hint = ''): Promise<Chain> {
  let contracts
  try {
    contracts = parseFocContracts(readFileSync(file, 'utf8'))
  } catch (err) {
    throw new ConfigError(`${fileName}: ${file} cannot be read as the devnet's contract addresses: ${(err as Error).message}`)
  }
  const client = createPublicClient({ transport: http(rpcUrl, { retryCount: 0, timeout: 10_000 }) })
  const [genesis, chainId] = await Promise.all([client.getBlock({ blockNumber: 0n }), client.getChainId()]).catch(() => {
    throw new ConfigError(`${rpcName}: the Onchain Cloud's FEVM JSON-RPC does not answer at ${rpcUrl}${hint}`)
  })
  if (chainId !== SDK_DEVNET_CHAIN_ID) {
    throw new ConfigError(
      `${rpcName}: ${rpcUrl} is chain ${chainId}; the Synapse SDK the gateway uses (0.41) takes one devnet chain id, ${SDK_DEVNET_CHAIN_ID} (FilOzone foc-devnet's)`,
    )
  }
  return focChain('devnet', rpcUrl, { contracts, genesisTimestamp: Number(genesis.timestamp) })
}
