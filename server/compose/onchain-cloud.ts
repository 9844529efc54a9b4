import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { LocalAccount } from 'viem'
import { ConfigError, type Config } from '../shared/config.ts'
import type { Logger } from '../shared/logger.ts'
import { FOC_CHAIN_IDS } from '../network/foc/chain.ts'
import { connectFocClient, FocDeploymentError, type FocAnchors, type FocClient } from '../network/foc/client.ts'
import { parseFocContracts } from '../network/foc/contracts-file.ts'
import { PUBLISHED_ANCHORS } from '../network/foc/published.ts'

/** Where the gateway looks for its Onchain Cloud, and the words that name each setting in a refusal. */
export interface OnchainCloudTarget {
  rpcUrl: string
  anchors: FocAnchors
  chainIds: readonly number[]
  /** The setting that names the node (FOC_RPC_URL, or the simulated one's). */
  rpcName: string
  /** The setting the anchors come from (FOC_CONTRACTS, the simulated one's file), or the network's published deployment. */
  anchorsName: string
  /** Said after a node that does not answer. */
  hint: string
}

/**
 * The Onchain Cloud cannot be used yet at start (its node does not answer, its clock cannot be read): PDP copies
 * are off, said in the log; every other refusal stops the start.
 */
export class OnchainCloudNotReady extends ConfigError {}

/**
 * The Filecoin Onchain Cloud the gateway stores on: FOC_RPC_URL on
 * NETWORK=mainnet or calibration, found from the network's published FWSS
 * proxy (published.ts); FOC_RPC_URL on NETWORK=devnet, found from the FWSS
 * proxy, Multicall3 and endorsement set in FOC_CONTRACTS; otherwise the
 * simulated one `npm start` runs, found from its own file (DATA_DIR/simfoc/contracts.json)
 * like any devnet, on whichever chain id it stands as (SIMFOC_CHAIN). Every other address is read
 * from FWSS on chain.
 */
export function onchainCloudTarget(config: Config): OnchainCloudTarget {
  const { rpcUrl, contractsFile, simulatedRpcUrl } = config.onchainCloud
  const network = config.service.network
  if (rpcUrl && (network === 'mainnet' || network === 'calibration')) {
    const { chainId, ...anchors } = PUBLISHED_ANCHORS[network]
    return { rpcUrl, anchors, chainIds: [chainId], rpcName: 'FOC_RPC_URL', anchorsName: `NETWORK=${network}`, hint: '' }
  }
  if (rpcUrl) {
    const anchors = readAnchors(contractsFile!, 'FOC_CONTRACTS')
    return { rpcUrl, anchors, chainIds: [FOC_CHAIN_IDS.devnet], rpcName: 'FOC_RPC_URL', anchorsName: 'FOC_CONTRACTS', hint: '' }
  }
  const file = join(config.files.simfoc, 'contracts.json')
  if (!existsSync(file)) {
    throw new OnchainCloudNotReady(
      `no simulated Onchain Cloud in ${config.files.simfoc}: start the stack (npm start) first, or set FOC_RPC_URL for a real one`,
    )
  }
  const fileName = `the simulated Onchain Cloud's ${file}`
  return {
    rpcUrl: simulatedRpcUrl,
    anchors: readAnchors(file, fileName),
    chainIds: Object.values(FOC_CHAIN_IDS),
    rpcName: 'SIMFOC_RPC_URL',
    anchorsName: fileName,
    hint: ' (is the stack running? npm start)',
  }
}

function readAnchors(file: string, fileName: string): FocAnchors {
  try {
    return parseFocContracts(readFileSync(file, 'utf8'))
  } catch (err) {
    throw new ConfigError(`${fileName}: ${file} cannot be read as the devnet's contract addresses: ${(err as Error).message}`)
  }
}

/**
 * The gateway's client of its Onchain Cloud (onchainCloudTarget), paying
 * from `account`. A chain that is not the network's, or an Onchain Cloud
 * that is not GA (a pre-GA view where FWSS points), is a ConfigError in one
 * line naming the setting; a node that does not answer is OnchainCloudNotReady.
 */
export async function connectOnchainCloud(
  config: Config,
  account: LocalAccount,
  o: { logger?: Logger; recheckMs?: number } = {},
): Promise<FocClient> {
  const t = onchainCloudTarget(config)
  try {
    return await connectFocClient({ rpcUrl: t.rpcUrl, anchors: t.anchors, chainIds: t.chainIds, account, ...o })
  } catch (err) {
    if (!(err instanceof FocDeploymentError)) {
      throw new OnchainCloudNotReady(`${t.rpcName}: the Onchain Cloud's FEVM JSON-RPC does not answer at ${t.rpcUrl}${t.hint}`)
    }
    if (err.code === 'WRONG_CHAIN')
      throw new ConfigError(`${t.rpcName}: the node at ${t.rpcUrl} is ${err.message} as ${t.anchorsName} asks`)
    throw new ConfigError(`${t.anchorsName}: ${err.message}, on the chain at ${t.rpcUrl}`)
  }
}
