import type { Config } from '../shared/config.ts'
import { startServer } from '../shared/http.ts'
import type { Logger } from '../shared/logger.ts'
import { createBridge } from '../bridge/index.ts'
import { devnetClock } from '../network/index.ts'
import { savedSimnetClock } from './local-chain.ts'
import { serverOptions, type Part } from './part.ts'

/** `--role app`: the app surface on PORT, in front of the gateway at GATEWAY_URL. */
export async function runApp(config: Config, logger: Logger): Promise<Part> {
  // The tab's dates follow the local network's clock: the simulated chain's saved one, or the devnet node's.
  const s = config.service
  const localClock =
    s.network === 'devnet' && s.lotusUrl ? await devnetClock({ url: s.lotusUrl, token: s.lotusToken }) : savedSimnetClock(config)
  const bridge = await createBridge(config.bridge, { logger, simnetClock: localClock })
  const server = await startServer(bridge.listener, config.bridge.port, config.bridge.host, {
    ...serverOptions(config, logger),
    ...bridge.serverOptions,
  })
  const mode =
    config.bridge.filesync === 'nextcloud' ? `beside Nextcloud at ${config.bridge.nextcloudUrl} (OCS routes only)` : 'WebDAV files, OCS'
  logger.info({ url: server.url, gateway: config.bridge.gatewayUrl }, `app surface listening (${mode})`)
  return { name: 'app', url: server.url, server, close: () => bridge.close() }
}
