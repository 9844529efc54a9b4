import { parseArgs } from 'node:util'
import { createHash } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { mkdirSync, readFileSync, realpathSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfig, ConfigError, type Config } from './shared/config.ts'
import { createLinePrettifier, createLogger, logFormatFor, type Logger } from './shared/logger.ts'
import { startServer, type RunningServer, type ServerOptions } from './shared/http.ts'
import { createConnectionBudget, type ConnectionBudget } from './shared/connection-cap.ts'
import { loadOrCreateSecretFile, randomSecret } from './shared/secrets.ts'
import { watchDiskSpace } from './shared/disk.ts'
import { announceReady, createSupervisor, type PartReady } from './supervisor.ts'
import { createGateway } from './gateway/index.ts'
import { createBridge } from './bridge/index.ts'
import { createDealService, type DealService } from './service/index.ts'
import { serviceErrorBody } from './service/errors.ts'
import { whyNotPublic } from './gateway/deals/public-url.ts'
import { connectToNetwork, type NetworkAccess } from './gateway/deals/network-access.ts'
import { startSimulatedNetwork } from './network/simnet/on-loopback.ts'
import { acquireDataFolder, DataFolderInUse } from './gateway/data-lock.ts'
import { DatabaseInUse } from './gateway/database-lock.ts'
import { openKeystore } from './network/wallet/keystore.ts'
import { addressNetworkOf, formatAddress } from './shared/address.ts'
import { createSimnet, type Simnet } from './network/simnet/index.ts'
import { openSimChainStore } from './network/simnet/chain-store.ts'
import { createNetwork, devnetClock, simnetOverRpc } from './network/index.ts'
import { networkClock, speedInWords, spedUpClock, type NetworkClock } from './shared/epochs.ts'
import type { Faults } from './shared/faults.ts'

const HELP = `Usage: npm start -- [--role all|app|gateway|service]

Runs the Nextcloud/Filecoin stack on loopback.
  --role all      the whole stack (default): the deal service, the gateway and
                  the app surface as three supervised processes talking over
                  HTTP, each restarted if it dies, with one combined log
  --role app      only the app surface; point it at a gateway with GATEWAY_URL
  --role gateway  only the gateway
  --role service  only the deal service (ticker, /private/v1/*, /openapi.json)
  -h, --help      this text

NETWORK=devnet LOTUS_URL=http://127.0.0.1:1234/rpc/v1 runs the three parts
against a local Lotus-compatible node and its providers (no simulation): the
clock is read from the node, test (t…) addresses, a loopback
GATEWAY_PUBLIC_URL is allowed and a wallet key is made at the first start.

Configuration is read from the environment; see README.md ("Configuration").
Main variables: PORT (8080), GATEWAY_PORT (9011), HOST (127.0.0.1),
DATA_DIR (./data), GATEWAY_URL, GATEWAY_USER, GATEWAY_PASSWORD, ADMIN_PASSWORD,
NETWORK (simnet|mainnet|calibration|devnet), GROUP_SIZE, GROUP_IDLE_SECONDS, LOG_LEVEL,
SERVICE_PORT (8090), API_KEY, SIMNET_SEED, SIMNET_SPEED, SIMNET_FAULT_RATE, LOTUS_URL, LOTUS_TOKEN,
SERVICE_URL, SERVICE_API_KEY, GATEWAY_PUBLIC_URL, WALLET, DEAL_CLIENT_ADDRESS,
DEAL_DURATION_DAYS, DEAL_PRICE, DEAL_VERIFIED, DEAL_START_OFFSET, DEAL_COPIES,
DEAL_TICK_SECONDS, RETRIEVAL_CHECK_SECONDS, DEAL_RENEW_BEFORE_DAYS,
FILESYNC (embedded|nextcloud), NEXTCLOUD_URL, NEXTCLOUD_TIMEOUT_MS, TRUST_PROXY.
`

type Role = 'all' | 'app' | 'gateway' | 'service'
const STOP_DEADLINE_MS = 10_000
const ROLES: Role[] = ['all', 'app', 'gateway', 'service']

interface Part {
  name: string
  server: RunningServer
  close(): Promise<void>
}

/**
 * What the process is started with besides its configuration: `npm start` gives nothing; a crash
 * test starts it from its own entry (test/helpers/crash-entry.ts) with the faults it needs, and
 * the supervisor starts each part from that same entry.
 */
export interface StartOptions {
  /** Where the gateway stops for a test; nothing happens without it. */
  faults?: Faults
  /** The file each supervised part is started from (this one without it). */
  entry?: string
}

async function main(o: StartOptions): Promise<void> {
  const { values } = parseArgs({
    options: { role: { type: 'string', default: 'all' }, help: { type: 'boolean', short: 'h' } },
    strict: true,
  })
  if (values.help) {
    process.stdout.write(HELP)
    return
  }
  const role = values.role as Role
  if (!ROLES.includes(role)) throw new ConfigError(`Unknown --role "${role}" (${ROLES.join(', ')})`)

  const config = loadConfig()
  const logger = createLogger(config.logLevel, logFormatFor(config.logFormat))
  mkdirSync(config.dataDir, { recursive: true })
  if (role === 'all') return superviseStack(config, logger, o.entry ?? fileURLToPath(import.meta.url))

  const disk = role === 'gateway' ? watchDiskSpace({ dir: config.dataDir, warnBelowBytes: config.diskWarnBelowBytes, logger }) : undefined
  let part: Part | undefined
  let stopping = false
  const stop = async (signal: string) => {
    // Ctrl-C reaches a supervised part twice: SIGINT from the terminal, then SIGTERM from npm start.
    if (stopping) return
    stopping = true
    disk?.stop()
    logger.info({ signal }, 'shutting down: finishing in-flight requests')
    // A part that cannot finish stopping (a stuck transfer, a provider that never answers) goes anyway:
    // what it stored is safe (SQLite transactions; half-written files are swept at the next start),
    // and a gateway must free its data folder for the one that replaces it.
    setTimeout(() => {
      logger.warn({ afterMs: STOP_DEADLINE_MS }, 'shutdown took too long: exiting now')
      process.exit(1)
    }, STOP_DEADLINE_MS).unref()
    if (part) {
      await part.server.close()
      await part.close()
      logger.info({ part: part.name }, 'stopped')
    }
    process.exit(0)
  }
  process.once('SIGINT', () => void stop('SIGINT'))
  process.once('SIGTERM', () => void stop('SIGTERM'))
  // Under a supervisor: when it is gone (even killed outright), this part stops too. Its
  // stdout was the supervisor's pipe: writing there now fails, so the part stops silently.
  if (process.connected) {
    process.once('disconnect', () => {
      logger.level = 'silent'
      void stop('supervisor gone')
    })
  }

  const ready: Record<string, unknown> = {}
  if (role === 'service') {
    // The embedded simulated network runs beside the deal service: its chain, its providers.
    // A replica (SIMNET_RPC_URL) reads the one another deal service runs.
    const s = config.service
    const simnet = s.lotusUrl ? undefined : s.simnetRpcUrl ? openSimnetDirectory(config) : openSimnet(config)
    const service = await runService(config, logger, simnet)
    ready.rpcUrl = service.rpcUrl
    part = service
  } else if (role === 'gateway') {
    part = await runGateway(config, logger, o.faults)
  } else {
    part = await runBridge(config, logger)
  }
  // Under `--role all`, the supervisor passes this on to the parts started after this one.
  announceReady({ url: part.server.url, ...ready })
}

/**
 * `--role all`: the deal service, the gateway and the app surface as three
 * processes, so a CPU storm or a crash in one does not stall or end another.
 * A part that dies is restarted on the port it had; the parts' log lines come
 * out as one stream. The gateway is linked to the deal service with the
 * default tenant's key and client address, the app to the gateway with a
 * service account, all kept in DATA_DIR.
 */
async function superviseStack(config: Config, logger: Logger, entry: string): Promise<void> {
  linkEmbeddedGateway(config)
  // The gateway's wallet key, made at the first start on the simulated network; the deal service
  // learns its address so that the gateway's deals are the default tenant's.
  const clientAddress = walletSigner(config)?.address
  const account = { GATEWAY_USER: config.gateway.user!, GATEWAY_PASSWORD: config.gateway.password! }
  // A restarted part keeps the port it announced, so the other parts' links stay valid.
  const samePort = (name: string, ready: ReadonlyMap<string, PartReady>): Record<string, string> => {
    const previous = ready.get(name)
    return previous ? { [PORT_VARIABLE[name]]: new URL(previous.url).port } : {}
  }
  // The parts log JSON lines to the supervisor, which shows them as they are or pretty for a person.
  const prettify = logFormatFor(config.logFormat) === 'pretty' ? createLinePrettifier() : (line: string) => line + '\n'
  const supervisor = createSupervisor({
    entry,
    logger,
    output: (line) => process.stdout.write(prettify(line)),
    parts: [
      {
        name: 'service',
        args: ['--role', 'service'],
        env: (ready) => {
          // A restarted service serves the simulated chain's RPC where the gateway already reads it.
          const rpcUrl = ready.get('service')?.rpcUrl
          return {
            ...samePort('service', ready),
            ...(typeof rpcUrl === 'string' ? { SIMNET_RPC_PORT: new URL(rpcUrl).port } : {}),
            ...(clientAddress ? { DEAL_CLIENT_ADDRESS: clientAddress } : {}),
            LOG_FORMAT: 'json',
          }
        },
      },
      {
        name: 'gateway',
        args: ['--role', 'gateway'],
        env: (ready) => {
          const service = ready.get('service')!
          return {
            ...account,
            ...samePort('gateway', ready),
            LOG_FORMAT: 'json',
            SERVICE_URL: config.gateway.serviceUrl ?? service.url,
            // The key the deal service created at its first start (or API_KEY), read once it exists.
            SERVICE_API_KEY: config.gateway.serviceApiKey ?? config.service.apiKey ?? readFileSync(join(config.service.dataDir, 'api-key'), 'utf8').trim(),
            ...(typeof service.rpcUrl === 'string' ? { SIMNET_RPC_URL: service.rpcUrl } : {}),
          }
        },
      },
      {
        name: 'app',
        args: ['--role', 'app'],
        env: (ready) => ({ ...account, ...samePort('app', ready), LOG_FORMAT: 'json', GATEWAY_URL: config.bridge.gatewayUrl ?? ready.get('gateway')!.url }),
      },
    ],
  })
  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    logger.info({ signal }, 'shutting down: the app surface, then the gateway, then the deal service')
    await supervisor.stop()
    process.exit(0)
  }
  process.once('SIGINT', () => void stop('SIGINT'))
  process.once('SIGTERM', () => void stop('SIGTERM'))
  let ready: ReadonlyMap<string, PartReady>
  try {
    ready = await supervisor.start()
  } catch (err) {
    await supervisor.stop()
    throw new ConfigError(`The stack did not start: ${(err as Error).message}`)
  }
  process.stdout.write(startBanner(config, ready))
}

/** What a person needs after `npm start`: where to go, how to log in, how to sync, how to stop. */
function startBanner(config: Config, ready: ReadonlyMap<string, PartReady>): string {
  const app = ready.get('app')!.url
  const password = config.bridge.adminPassword ? 'the one in ADMIN_PASSWORD' : `in ${join(config.bridge.dataDir, 'admin-password')}`
  const network = config.service.lotusUrl
    ? `${config.service.network}, through ${new URL(config.service.lotusUrl).host}`
    : `simulated network, ${speedInWords(spedUpClock(config.service.simnetGenesis, config.service.simnetSpeed, Date.now() / 1000)) ?? 'in real time'}`
  return [
    '',
    `  Filecoin storage for Nextcloud is running (${network}).`,
    '',
    `  Files and the sidebar tab:  ${app}/`,
    `  Log in as:                  admin, password ${password}`,
    `  WebDAV (rclone, desktop):   ${app}/remote.php/dav/files/admin/`,
    `  Gateway:                    ${ready.get('gateway')!.url}`,
    `  Deal service:               ${ready.get('service')!.url}/openapi.json`,
    ...(typeof ready.get('service')!.rpcUrl === 'string' ? [`  Simulated chain (Lotus RPC): ${ready.get('service')!.rpcUrl}`] : []),
    '',
    '  Stop with Ctrl-C.',
    '',
    '',
  ].join('\n')
}

const PORT_VARIABLE: Record<string, string> = { service: 'SERVICE_PORT', gateway: 'GATEWAY_PORT', app: 'PORT' }

/** In the all-in-one default the bridge talks to its own gateway with a service account saved in the data dir. */
function linkEmbeddedGateway(config: Config): void {
  const g = config.gateway
  if (!g.user || !g.password) {
    g.user = 'bridge'
    g.password = loadOrCreateSecretFile(join(config.dataDir, 'gateway-password'), () => randomSecret()).value
  }
  config.bridge.gatewayUser = g.user
  config.bridge.gatewayPassword = g.password
}

const simChainFile = (config: Config) => join(config.dataDir, 'simnet', 'chain.sqlite')

/** The embedded simulated chain, in `<DATA_DIR>/simnet/chain.sqlite`, shared by every process that opens it. */
function openSimnet(config: Config): Simnet {
  const s = config.service
  return createSimnet({ seed: s.simnetSeed, speed: s.simnetSpeed, genesis: s.simnetGenesis, nv29Epoch: s.simnetNv29Epoch, stateFile: simChainFile(config) })
}

/**
 * A deal service replica's view of the simulated network another one runs:
 * the providers and their terms follow from the seed alone, the chain's clock
 * from its saved state; deals are read over the RPC, never kept here.
 */
function openSimnetDirectory(config: Config): Simnet {
  const s = config.service
  return createSimnet({ seed: s.simnetSeed, speed: s.simnetSpeed, genesis: s.simnetGenesis, nv29Epoch: s.simnetNv29Epoch, clock: savedSimnetClock(config) })
}

/** The simulated chain's clock as saved there, so that the app surface's dates follow the same (sped-up) head. */
function savedSimnetClock(config: Config): NetworkClock | undefined {
  if (config.service.lotusUrl) return undefined
  const store = openSimChainStore(simChainFile(config))
  try {
    return store.clock(config.service.simnetGenesis, config.service.simnetSpeed, Date.now())
  } finally {
    store.close()
  }
}

/**
 * The wallet key that signs the gateway's deals (WALLET, else the default key
 * of `<DATA_DIR>/wallet`). On the simulated network and on a devnet (whose
 * keys are throwaway) one is made at the first start; on a real one the
 * operator brings it (`npm run wallet`).
 */
function walletSigner(config: Config) {
  const simulated = config.service.network === 'devnet' || (!config.service.lotusUrl && !config.gateway.lotusUrl)
  const keystore = openKeystore(join(config.dataDir, 'wallet'), addressNetworkOf(config.service.network))
  if (keystore.list().length === 0) {
    if (!simulated) return undefined
    keystore.create()
  }
  return keystore.signer(config.gateway.wallet)
}

/**
 * How the gateway reaches the network: the chain through Lotus JSON-RPC (the
 * simulated chain's, SIMNET_RPC_URL, or LOTUS_URL) and providers through the
 * Boost protocols, signing with its wallet key. Undefined (no deals) without
 * a chain or a key, which the log says.
 */
async function networkAccess(config: Config, logger: Logger): Promise<(NetworkAccess & { clientAddress: string }) | undefined> {
  const g = config.gateway
  const url = g.simnetRpcUrl ?? g.lotusUrl
  if (!url) return undefined
  // Real providers fetch CARs from GATEWAY_PUBLIC_URL: a loopback or private one would make every deal fail.
  // A devnet's providers run on the same machine or network, so there any URL they reach will do.
  const devnet = config.service.network === 'devnet'
  const notPublic = g.simnetRpcUrl || devnet ? null : whyNotPublic(g.publicUrl)
  if (notPublic) {
    logger.error(`deals are off: ${notPublic}; storage providers on ${config.service.network} must be able to fetch CARs from it (set it to this gateway's public https URL)`)
    return undefined
  }
  const signer = walletSigner(config)
  if (!signer) {
    logger.error('no wallet key: deals are off until one is made or imported (npm run wallet -- new | import)')
    return undefined
  }
  const clock = g.simnetRpcUrl
    ? savedSimnetClock(config)!
    : devnet
      ? await devnetClock({ url, token: g.lotusToken })
      : networkClock(config.service.network as Exclude<typeof config.service.network, 'devnet'>)
  const access = await connectToNetwork({ rpcUrl: url, token: g.simnetRpcUrl ? undefined : g.lotusToken, clock, signer, network: addressNetworkOf(config.service.network) })
  logger.info({ clientAddress: signer.address, chain: url }, 'deals are signed by the wallet key')
  return { ...access, clientAddress: signer.address }
}

let connections: ConnectionBudget | undefined

/** Every part's connection rules; one connection budget for the whole process, whose descriptors they share. */
function serverOptions(config: Config, logger: Logger): ServerOptions {
  const { maxConnections, maxConnectionsPerAddress, ...limits } = config.http
  connections ??= createConnectionBudget({ maxConnections, maxPerAddress: maxConnectionsPerAddress, logger })
  return { ...limits, connections }
}

async function runGateway(config: Config, logger: Logger, faults?: Faults): Promise<Part> {
  const dataLock = await acquireDataFolder(config.gateway.dataDir, 15_000, (message) => logger.warn(message))
  const access = await networkAccess(config, logger)
  const gateway = await createGateway({ ...config.gateway, clientAddress: access?.clientAddress }, { logger, providers: access?.port, dataLock, faults })
  const server = await startServer(gateway.app, config.gateway.port, config.gateway.host, serverOptions(config, logger))
  gateway.startDeals(server.url)
  logger.info({ url: server.url, dataDir: config.gateway.dataDir, records: config.gateway.databaseUrl ? 'PostgreSQL schema gateway' : 'gateway.sqlite', deals: gateway.deals !== undefined, chain: config.gateway.simnetRpcUrl }, 'gateway listening (WebDAV and POST /file-info)')
  return {
    name: 'gateway',
    server,
    async close() {
      await gateway.close()
      await access?.close()
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
    simnet, dir: join(config.dataDir, 'simnet', 'providers'), seed: config.service.simnetSeed, host: config.service.host,
    rpcPort: config.service.simnetRpcPort ?? 1234, http: serverOptions(config, logger),
    faults: { rate: config.service.simnetFaultRate ?? 0, onFault: (site, fault, label) => logger.debug({ site, fault, label }, 'simulated network fault') },
  })
  const kinds = [...network.hosts.endpoints.values()].reduce<Record<string, number>>((n, e) => ({ ...n, [e.kind]: (n[e.kind] ?? 0) + 1 }), {})
  logger.info({ url: network.rpcUrl, providers: kinds }, 'simulated network: chain serving Lotus JSON-RPC, Boost-like (TCP) and Curio-like (WebSocket) providers on loopback')
  return {
    rpcUrl: network.rpcUrl,
    async close() {
      await network.close()
      await simnet.close()
    },
  }
}

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

const DEMO_DEALS = 50

/** The deal service, and beside it the simulated network when no real chain is configured. */
async function runService(config: Config, logger: Logger, simnet?: Simnet): Promise<Part & { service: DealService; rpcUrl?: string }> {
  // The network first: the service reads the chain through its RPC from its first query on.
  const replica = config.service.simnetRpcUrl
  const network = simnet && !replica ? await runSimulatedNetwork(config, logger, simnet) : undefined
  const rpcUrl = network?.rpcUrl ?? replica
  const service = await createDealService(config.service, { logger, network: simnet && rpcUrl ? simnetOverRpc(simnet, rpcUrl) : await devnetNetwork(config) })
  if (network) await seedDemoClient(service, simnet!, config.service.simnetSeed)
  if (service.createdApiKey) {
    // Shown once; only its hash is stored (the file beside it is mode 0600).
    process.stdout.write(`\nDeal service API key of tenant "default" (also in ${join(config.service.dataDir, 'api-key')}):\n  ${service.createdApiKey}\n\n`)
  }
  const server = await startServer(service.app, config.service.port, config.service.host, { ...serverOptions(config, logger), errorBody: serviceErrorBody })
  logger.info({ url: server.url, network: service.network.kind }, 'deal service listening (/public/v1, /private/v1, /openapi.json)')
  return {
    name: 'service',
    server,
    service,
    rpcUrl,
    async close() {
      await service.close()
      await (network ?? simnet)?.close()
    },
  }
}

/** On NETWORK=devnet: the chain of its node (LOTUS_URL), with the clock the node tells; otherwise undefined. */
async function devnetNetwork(config: Config) {
  const s = config.service
  if (s.network !== 'devnet' || !s.lotusUrl) return undefined
  return createNetwork(s, { clock: await devnetClock({ url: s.lotusUrl, token: s.lotusToken }) })
}

async function runBridge(config: Config, logger: Logger): Promise<Part> {
  if (!config.bridge.gatewayUrl) throw new ConfigError('--role app needs GATEWAY_URL')
  // The tab's dates follow the local network's clock: the simulated chain's saved one, or the devnet node's.
  const s = config.service
  const localClock = s.network === 'devnet' && s.lotusUrl ? await devnetClock({ url: s.lotusUrl, token: s.lotusToken }) : savedSimnetClock(config)
  const bridge = await createBridge(config.bridge, { logger, simnetClock: localClock })
  const server = await startServer(bridge.listener, config.bridge.port, config.bridge.host, { ...serverOptions(config, logger), ...bridge.serverOptions })
  const mode = config.bridge.filesync === 'nextcloud' ? `beside Nextcloud at ${config.bridge.nextcloudUrl} (OCS routes only)` : 'WebDAV files, OCS'
  logger.info({ url: server.url, gateway: config.bridge.gatewayUrl }, `app surface listening (${mode})`)
  return { name: 'app', server, close: () => bridge.close() }
}

/** Runs the process until it is stopped; exits with 1 (and says why) if it cannot start. */
export function start(o: StartOptions = {}): void {
  main(o).catch(failedToStart)
}

// `npm start` runs this file; a test's entry imports it and calls start() itself.
if (isMainModule()) start()

function isMainModule(): boolean {
  try {
    return realpathSync(process.argv[1] ?? '') === fileURLToPath(import.meta.url)
  } catch {
    return false
  }
}

function failedToStart(err: any): never {
  if (err instanceof ConfigError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    process.stderr.write(`${err.message}\n\nRun with --help for usage.\n`)
  } else if (err instanceof DataFolderInUse || err instanceof DatabaseInUse) {
    process.stderr.write(`${err.message}\n`)
  } else {
    process.stderr.write(`Failed to start: ${err?.stack ?? err}\n`)
  }
  process.exit(1)
}
