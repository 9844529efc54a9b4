import type { Config } from '../shared/config.ts'
import { startServer } from '../shared/http.ts'
import type { Logger } from '../shared/logger.ts'
import { devnetClock, lotusNetworkFor } from '../network/index.ts'
import type { NetworkPort } from '../network/types.ts'
import type { Simnet } from '../simulation/index.ts'
import { createDealService, serviceErrorBody, type DealService } from '../service/index.ts'
import { checkNodeNetwork } from './node-network.ts'
import { demoClientAddress, openSimnet, openSimnetDirectory, simnetFor, simnetOverRpc } from './local-chain.ts'
import { runSimulatedNetwork, seedDemoDeals } from './network.ts'
import { serverOptions, type Part } from './part.ts'

/**
 * `--role service`: the deal service, and beside it the simulated network when
 * no real chain is configured and it runs alone. Under `npm start`, and for a
 * replica, SIMNET_RPC_URL names the simulated network another process runs
 * (`--role network`, or another deal service).
 */
export async function runService(config: Config, logger: Logger): Promise<Part & { rpcUrl?: string; focRpcUrl?: string }> {
  const source = config.chain.service
  const simnet = source === 'simnet' ? openSimnet(config) : source === 'simnet-replica' ? openSimnetDirectory(config) : undefined
  // The network first: the service reads the chain through its RPC from its first query on.
  const network = source === 'simnet' ? await runSimulatedNetwork(config, logger, simnet!) : undefined
  const rpcUrl = network?.rpcUrl ?? config.service.simnetRpcUrl
  const service = await createDealService(config.service, { logger, network: await serviceNetwork(config, simnet, rpcUrl, logger) })
  if (network) await seedDemoDeals(simnet!, config.service.simnetSeed)
  if (simnet) await addDemoClient(service, config.service.simnetSeed)
  if (service.createdApiKey) {
    // Shown once; only its hash is stored (the file beside it is mode 0600).
    process.stdout.write(
      `\nDeal service API key of tenant "default" (also in ${config.files.serviceApiKey}):\n  ${service.createdApiKey}\n\n`,
    )
  }
  const server = await startServer(service.app, config.service.port, config.service.host, {
    ...serverOptions(config, logger),
    errorBody: serviceErrorBody,
  })
  logger.info({ url: server.url, network: service.network.kind }, 'deal service listening (/public/v1, /private/v1, /openapi.json)')
  return {
    name: 'service',
    url: server.url,
    server,
    rpcUrl,
    focRpcUrl: network?.focRpcUrl,
    async close() {
      await service.close()
      await (network ?? simnet)?.close()
    },
  }
}

/**
 * The simulated network's demo client: an address of the default tenant
 * whose past deals the simulated chain seeds, so that the deal service's
 * on-chain deal pages have something to show from the start.
 */
async function addDemoClient(service: DealService, seed: string): Promise<void> {
  const tenant = await service.tenants.byName('default')
  const address = demoClientAddress(seed)
  if (tenant && !tenant.clientAddresses.includes(address)) await service.tenants.addClientAddress(tenant.id, address)
}

/**
 * The chain the deal service reads: the simulated network's through its
 * JSON-RPC at `rpcUrl` (run beside this service or by another one), else the
 * node at LOTUS_URL (on a devnet with the clock the node tells), else the
 * simulated chain in this process.
 */
async function serviceNetwork(
  config: Config,
  simnet: Simnet | undefined,
  rpcUrl: string | undefined,
  logger: Logger,
): Promise<NetworkPort> {
  const s = config.service
  if (simnet && rpcUrl) return simnetOverRpc(simnet, rpcUrl)
  if (!s.lotusUrl) return simnetFor(s)
  await checkNodeNetwork({ url: s.lotusUrl, token: s.lotusToken }, s.network, logger)
  const clock = s.network === 'devnet' ? await devnetClock({ url: s.lotusUrl, token: s.lotusToken }) : undefined
  return lotusNetworkFor(s, { clock })
}
