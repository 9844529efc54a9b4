import { createPublicClient, http } from 'viem'
import { ConfigError, type Config } from '../shared/config.ts'
import type { NetworkClock } from '../shared/epochs.ts'
import { startServer } from '../shared/http.ts'
import type { Logger } from '../shared/logger.ts'
import { createBridge } from '../bridge/index.ts'
import { devnetClock } from '../network/index.ts'
import { readChainClock, viemBlocks } from '../network/foc/chain-clock.ts'
import { savedSimnetClock } from './local-chain.ts'
import { serverOptions, type Part } from './part.ts'

/** `--role app`: the app surface on PORT, in front of the gateway at GATEWAY_URL. */
export async function runApp(config: Config, logger: Logger): Promise<Part> {
  const bridge = await createBridge(config.bridge, { logger, simnetClock: await localClock(config) })
  const server = await startServer(bridge.listener, config.bridge.port, config.bridge.host, {
    ...serverOptions(config, logger),
    ...bridge.serverOptions,
  })
  const mode =
    config.bridge.filesync === 'nextcloud' ? `beside Nextcloud at ${config.bridge.nextcloudUrl} (OCS routes only)` : 'WebDAV files, OCS'
  logger.info({ url: server.url, gateway: config.bridge.gatewayUrl }, `app surface listening (${mode})`)
  return { name: 'app', url: server.url, server, close: () => bridge.close() }
}

/**
 * The local network's clock the tab dates epochs by: the simulated chain's
 * saved one; on a devnet its Lotus node's, or, for the Onchain Cloud alone
 * (DEAL_COPIES=0, no LOTUS_URL), its FEVM chain's, read from its blocks.
 * The real networks' are constants (undefined here).
 */
async function localClock(config: Config): Promise<NetworkClock | undefined> {
  const s = config.service
  if (s.network === 'simnet') return savedSimnetClock(config)
  if (s.network !== 'devnet') return undefined
  if (s.lotusUrl) return devnetClock({ url: s.lotusUrl, token: s.lotusToken })
  const rpcUrl = config.onchainCloud.rpcUrl!
  const client = createPublicClient({ transport: http(rpcUrl, { retryCount: 0, timeout: 10_000 }) })
  try {
    return { name: 'devnet', ...(await readChainClock(viemBlocks(client))) }
  } catch (err) {
    throw new ConfigError(`FOC_RPC_URL: the devnet's FEVM chain at ${rpcUrl} does not tell its clock: ${(err as Error).message}`)
  }
}
