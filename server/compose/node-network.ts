import { ConfigError } from '../shared/config.ts'
import type { NetworkName } from '../shared/contracts/network.ts'
import type { Logger } from '../shared/logger.ts'
import { networkNameMismatch, nodeNetworkName } from '../network/index.ts'

/**
 * At start, before anything is signed: the node at `url` must be on NETWORK
 * (network-name.ts says which names fit). A node on another network is a
 * ConfigError naming both; a node that does not answer is only logged here,
 * since a public node may be briefly down and every later call says so too.
 */
export async function checkNodeNetwork(rpc: { url: string; token?: string }, network: NetworkName, logger: Logger): Promise<void> {
  let reported: string
  try {
    reported = await nodeNetworkName(rpc)
  } catch (err) {
    logger.warn({ chain: rpc.url }, `could not read the node's network name to check NETWORK=${network}: ${(err as Error).message}`)
    return
  }
  const why = networkNameMismatch(network, reported, rpc.url)
  if (why) throw new ConfigError(`Invalid configuration:\n  ${why}`)
  logger.info({ chain: rpc.url, networkName: reported }, `the node is on NETWORK=${network}`)
}
