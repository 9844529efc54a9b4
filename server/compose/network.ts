import { ConfigError, type Config } from '../shared/config.ts'
import type { ServerOptions } from '../shared/http.ts'
import type { Logger } from '../shared/logger.ts'
import { addressNetworkOf } from '../shared/address.ts'
import { openKeystore } from '../network/index.ts'
import { ProvingScheduleMismatch, SimfocChainMismatch, startSimulatedFoc, startSimulatedNetwork, type Simnet } from '../simulation/index.ts'
import { demoClientAddress, openSimnet } from './local-chain.ts'
import { serverOptions, type Part } from './part.ts'
import { configuredPorts } from './ports.ts'

/** The simulated network's endpoints, as the parts reach them. */
export interface NetworkEndpoints {
  /** The simulated chain's Lotus JSON-RPC. */
  rpcUrl: string
  /** The simulated Onchain Cloud's FEVM JSON-RPC; unset with SIMFOC_PROVIDERS=0. */
  focRpcUrl?: string
}

const DEMO_DEALS = 50

/**
 * `--role network`: the simulated network in a process of its own, as
 * `npm start` runs it under its supervisor, so that nothing a local client
 * does to one of its ports (a flood, a trickled body) reaches a product
 * part's descriptors or event loop. Its chain, providers and Onchain Cloud
 * keep their state under DATA_DIR; the demo client's past deals are seeded here,
 * where the chain's RPC serves them.
 */
export async function runNetwork(config: Config, logger: Logger): Promise<Part & NetworkEndpoints> {
  if (config.chain.service !== 'simnet')
    throw new ConfigError('--role network runs the simulated network: unset LOTUS_URL and SIMNET_RPC_URL')
  const simnet = openSimnet(config)
  let network: Awaited<ReturnType<typeof runSimulatedNetwork>>
  try {
    network = await runSimulatedNetwork(config, logger, simnet)
  } catch (err) {
    await simnet.close()
    throw err
  }
  await seedDemoDeals(simnet, config.service.simnetSeed)
  return { name: 'network', url: network.rpcUrl, ...network }
}

/** The demo client's deals over the past year (the same ones under a seed), for the deal service's on-chain pages. */
export async function seedDemoDeals(simnet: Simnet, seed: string): Promise<void> {
  const id = await simnet.lookupId(demoClientAddress(seed))
  if (id) await simnet.seedClientDeals(id, DEMO_DEALS)
}

/**
 * The simulated network on loopback: its chain served as Lotus JSON-RPC
 * (SIMNET_RPC_PORT), its storage providers as libp2p hosts with HTTP
 * retrieval, their bytes under `<DATA_DIR>/simnet/providers/`, and the
 * simulated Onchain Cloud beside it. Every port it serves has the parts'
 * connection rules, and none it picks itself is one the parts are configured on.
 */
export async function runSimulatedNetwork(
  config: Config,
  logger: Logger,
  simnet: Simnet,
): Promise<NetworkEndpoints & { close(): Promise<void> }> {
  // The parts' connection rules, and never a port the parts are configured on for one it picks itself.
  const http = { ...serverOptions(config, logger), avoidPorts: new Set(configuredPorts(config)) }
  const network = await startSimulatedNetwork({
    simnet,
    dir: config.files.simnetProviders,
    seed: config.service.simnetSeed,
    host: config.service.host,
    rpcPort: config.service.simnetRpcPort ?? 1234,
    http,
    logger,
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
      : await runSimulatedFoc(config, logger, simnet, http).catch(async (err) => {
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
async function runSimulatedFoc(config: Config, logger: Logger, simnet: Simnet, http: ServerOptions) {
  const foc = await startSimulatedFoc({
    dir: config.files.simfoc,
    seed: config.service.simnetSeed,
    genesisTimestamp: simnet.clock.genesis,
    epochSeconds: simnet.clock.epochSeconds,
    providerCount: config.service.simfocProviders,
    proving: config.service.simfocProving,
    chain: config.service.simfocChain,
    rpcPort: config.service.simfocRpcPort,
    logger: logger.child({ part: 'simfoc' }),
    http,
  }).catch((err: unknown) => {
    // Another SIMFOC_PROVING or SIMFOC_CHAIN on an existing chain is a setting to change, not a crash.
    throw err instanceof ProvingScheduleMismatch || err instanceof SimfocChainMismatch ? new ConfigError(err.message) : err
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
