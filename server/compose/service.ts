import { createHash } from 'node:crypto'
import { formatAddress } from '../shared/address.ts'
import { ConfigError, type Config } from '../shared/config.ts'
import { startServer } from '../shared/http.ts'
import type { Logger } from '../shared/logger.ts'
import { devnetClock, lotusNetworkFor, openKeystore } from '../network/index.ts'
import type { NetworkPort } from '../network/types.ts'
import { ProvingScheduleMismatch, startSimulatedFoc, startSimulatedNetwork, type Simnet } from '../simulation/index.ts'
import { addressNetworkOf } from '../shared/address.ts'
import { createDealService, serviceErrorBody, type DealService } from '../service/index.ts'
import { checkNodeNetwork } from './node-network.ts'
import { openSimnet, openSimnetDirectory, simnetFor, simnetOverRpc } from './local-chain.ts'
import { serverOptions, type Part } from './part.ts'

/**
 * `--role service`: the deal service, and beside it the simulated network when
 * no real chain is configured. A replica (SIMNET_RPC_URL) reads the one
 * another deal service runs.
 */
export async function runService(config: Config, logger: Logger): Promise<Part & { rpcUrl?: string; focRpcUrl?: string }> {
  const source = config.chain.service
  const simnet = source === 'simnet' ? openSimnet(config) : source === 'simnet-replica' ? openSimnetDirectory(config) : undefined
  // The network first: the service reads the chain through its RPC from its first query on.
  const network = source === 'simnet' ? await runSimulatedNetwork(config, logger, simnet!) : undefined
  const rpcUrl = network?.rpcUrl ?? config.service.simnetRpcUrl
  const service = await createDealService(config.service, { logger, network: await serviceNetwork(config, simnet, rpcUrl, logger) })
  if (network) await seedDemoClient(service, simnet!, config.service.simnetSeed)
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
 * The simulated network on loopback: its chain served as Lotus JSON-RPC
 * (SIMNET_RPC_PORT), its storage providers as libp2p hosts with HTTP
 * retrieval, their bytes under `<DATA_DIR>/simnet/providers/`.
 */
async function runSimulatedNetwork(config: Config, logger: Logger, simnet: Simnet) {
  const network = await startSimulatedNetwork({
    simnet,
    dir: config.files.simnetProviders,
    seed: config.service.simnetSeed,
    host: config.service.host,
    rpcPort: config.service.simnetRpcPort ?? 1234,
    http: serverOptions(config, logger),
    faults: {
      rate: config.service.simnetFaultRate ?? 0,
      onFault: (site, fault, label) => logger.debug({ site, fault, label }, 'simulated network fault'),
    },
  })
  const kinds = [...network.hosts.endpoints.values()].reduce<Record<string, number>>(
    (n, e) => ({ ...n, [e.kind]: (n[e.kind] ?? 0) + 1 }),
    {},
  )
  logger.info(
    { url: network.rpcUrl, providers: kinds },
    'simulated network: chain serving Lotus JSON-RPC, Boost-like (TCP) and Curio-like (WebSocket) providers on loopback',
  )
  const foc =
    config.service.simfocProviders === 0
      ? undefined
      : await runSimulatedFoc(config, logger, simnet).catch(async (err) => {
          await network.close()
          throw err
        })
  return {
    rpcUrl: network.rpcUrl,
    focRpcUrl: foc?.rpcUrl,
    async close() {
      await foc?.close()
      await network.close()
      await simnet.close()
    },
  }
}

const FAUCET_FIL = 100n * 10n ** 18n
const FAUCET_USDFC = 1_000n * 10n ** 18n

/**
 * The simulated Filecoin Onchain Cloud on the simulated chain's clock: an
 * FEVM chain with our stand-in contracts (SIMFOC_RPC_PORT) and Curio-like PDP
 * providers, under `<DATA_DIR>/simfoc/`. At its first start the gateway's
 * wallet account gets test FIL and USDFC, as calibration's faucets give them.
 */
async function runSimulatedFoc(config: Config, logger: Logger, simnet: Simnet) {
  const foc = await startSimulatedFoc({
    dir: config.files.simfoc,
    seed: config.service.simnetSeed,
    genesisTimestamp: simnet.clock.genesis,
    epochSeconds: simnet.clock.epochSeconds,
    providerCount: config.service.simfocProviders,
    proving: config.service.simfocProving,
    rpcPort: config.service.simfocRpcPort,
    logger: logger.child({ part: 'simfoc' }),
  }).catch((err: unknown) => {
    // Another SIMFOC_PROVING on an existing chain is a setting to change, not a crash.
    throw err instanceof ProvingScheduleMismatch ? new ConfigError(err.message) : err
  })
  const wallet = openKeystore(config.wallet.dir, addressNetworkOf(config.service.network))
    .list()
    .find((k) => k.isDefault)
  if (foc.fresh && wallet) await foc.faucet(wallet.ethAddress, { fil: FAUCET_FIL, usdfc: FAUCET_USDFC })
  logger.info(
    { url: foc.rpcUrl, providers: foc.providers.length, proving: foc.proving },
    'simulated Onchain Cloud: FEVM chain serving eth_* JSON-RPC with the FOC contracts, Curio-like PDP providers on loopback',
  )
  return foc
}

const DEMO_DEALS = 50

/**
 * The simulated network's demo client: an address of the default tenant with
 * deals seeded over the past year (the same ones under a seed), so that the
 * deal service's on-chain deal pages have something to show from the start.
 */
async function seedDemoClient(service: DealService, simnet: Simnet, seed: string): Promise<void> {
  const tenant = await service.tenants.byName('default')
  if (!tenant) return
  const address = formatAddress('mainnet', 1, createHash('sha256').update(`client:${seed}`).digest().subarray(0, 20))
  if (!tenant.clientAddresses.includes(address)) await service.tenants.addClientAddress(tenant.id, address)
  const id = await simnet.lookupId(address)
  if (id) await simnet.seedClientDeals(id, DEMO_DEALS)
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
