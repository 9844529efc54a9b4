import { parseArgs } from 'node:util'
import { fileURLToPath } from 'node:url'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfig, ConfigError, type Config } from './shared/config.ts'
import { createLogger, type Logger } from './shared/logger.ts'
import { startServer, type RunningServer } from './shared/http.ts'
import { loadOrCreateSecretFile, randomSecret } from './shared/secrets.ts'
import { watchDiskSpace } from './shared/disk.ts'
import { announceReady, createSupervisor } from './supervisor.ts'
import { createGateway } from './gateway/index.ts'
import { createBridge } from './bridge/index.ts'
import { createDealService, type DealService } from './service/index.ts'
import { simnetProviderPort, type StorageProviderPort } from './gateway/deals/index.ts'
import { createSimnet, type Simnet } from './network/simnet/index.ts'
import { createSimulatedProviders, type SimulatedProviders } from './network/simnet/sim-providers.ts'

const HELP = `Usage: npm start -- [--role all|app|backend|gateway|service]

Runs the Nextcloud/Filecoin stack on loopback.
  --role all      the whole stack (default): the app surface and the backend as
                  two supervised processes talking over HTTP, each restarted
                  if it dies, with one combined log
  --role app      only the app surface; point it at a gateway with GATEWAY_URL
  --role backend  the gateway and the deal service in one process, sharing the
                  embedded simulated network
  --role gateway  only the gateway
  --role service  only the deal service (ticker, /private/v1/*, /openapi.json)
  -h, --help      this text

Configuration is read from the environment; see README.md ("Configuration").
Main variables: PORT (8080), GATEWAY_PORT (9011), HOST (127.0.0.1),
DATA_DIR (./data), GATEWAY_URL, GATEWAY_USER, GATEWAY_PASSWORD, ADMIN_PASSWORD,
NETWORK (simnet|mainnet|calibration), GROUP_SIZE, GROUP_IDLE_SECONDS, LOG_LEVEL,
SERVICE_PORT (8090), API_KEY, SIMNET_SEED, SIMNET_SPEED, LOTUS_URL, LOTUS_TOKEN,
SERVICE_URL, SERVICE_API_KEY, GATEWAY_PUBLIC_URL, DEAL_CLIENT_ADDRESS,
DEAL_DURATION_DAYS, DEAL_PRICE, DEAL_VERIFIED, DEAL_START_OFFSET, DEAL_COPIES,
DEAL_TICK_SECONDS, RETRIEVAL_CHECK_SECONDS, DEAL_RENEW_BEFORE_DAYS,
FILESYNC (embedded|nextcloud), NEXTCLOUD_URL, NEXTCLOUD_TIMEOUT_MS, TRUST_PROXY.
`

type Role = 'all' | 'app' | 'backend' | 'gateway' | 'service'
const ROLES: Role[] = ['all', 'app', 'backend', 'gateway', 'service']

interface Part {
  name: string
  server: RunningServer
  close(): Promise<void>
}

async function main(): Promise<void> {
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
  const logger = createLogger(config.logLevel)
  mkdirSync(config.dataDir, { recursive: true })
  if (role === 'all') return superviseStack(config, logger)
  if (role === 'backend') linkEmbeddedGateway(config)

  const withGateway = role === 'backend' || role === 'gateway'
  const disk = withGateway ? watchDiskSpace({ dir: config.dataDir, warnBelowBytes: config.diskWarnBelowBytes, logger }) : undefined
  const parts: Part[] = []
  const stop = async (signal: string) => {
    disk?.stop()
    logger.info({ signal }, 'shutting down: finishing in-flight requests')
    // Close the front first so nothing new reaches the gateway while it drains.
    for (const part of [...parts].reverse()) {
      await part.server.close()
      await part.close()
      logger.info({ part: part.name }, 'stopped')
    }
    process.exit(0)
  }
  process.once('SIGINT', () => void stop('SIGINT'))
  process.once('SIGTERM', () => void stop('SIGTERM'))
  // Under a supervisor: when it is gone (even killed outright), this part stops too.
  if (process.connected) process.once('disconnect', () => void stop('supervisor gone'))

  // One simulated network (chain and providers) shared by the service and the gateway, kept under DATA_DIR.
  const sim = role !== 'app' && !config.service.lotusUrl ? startSimnet(config) : undefined
  let service: (Part & { service: DealService }) | undefined
  if (role === 'backend' || role === 'service') {
    service = await runService(config, logger, sim?.simnet)
    parts.push(service)
  }
  let gateway: Part | undefined
  if (withGateway) {
    if (role === 'backend' && service) await linkEmbeddedService(config, service.service, service.server.url)
    gateway = await runGateway(config, logger, sim)
    parts.push(gateway)
  }
  if (role === 'app') parts.push(await runBridge(config, logger))
  // Under `--role all`, the supervisor passes these on to the parts started after this one.
  announceReady({ url: parts[parts.length - 1].server.url, gatewayUrl: gateway?.server.url, serviceUrl: service?.server.url })
}

/**
 * `--role all`: the backend (gateway and deal service, which share the
 * embedded simulated network) and the app surface as two processes, so a CPU
 * storm or a crash in one does not stall or end the other. A part that dies is
 * restarted on the port it had; the parts' log lines come out as one stream.
 */
async function superviseStack(config: Config, logger: Logger): Promise<void> {
  linkEmbeddedGateway(config)
  const account = { GATEWAY_USER: config.gateway.user!, GATEWAY_PASSWORD: config.gateway.password! }
  // A restarted part keeps the port it announced, so the other part's links stay valid.
  const portOf = (url: unknown) => (typeof url === 'string' ? new URL(url).port : '')
  const supervisor = createSupervisor({
    entry: fileURLToPath(import.meta.url),
    logger,
    output: (line) => process.stdout.write(line + '\n'),
    parts: [
      {
        name: 'backend',
        args: ['--role', 'backend'],
        env: (ready) => {
          const previous = ready.get('backend')
          return { ...account, ...(previous ? { GATEWAY_PORT: portOf(previous.gatewayUrl), SERVICE_PORT: portOf(previous.serviceUrl) } : {}) }
        },
      },
      {
        name: 'app',
        args: ['--role', 'app'],
        env: (ready) => {
          const previous = ready.get('app')
          return { ...account, GATEWAY_URL: String(ready.get('backend')!.gatewayUrl), ...(previous ? { PORT: portOf(previous.url) } : {}) }
        },
      },
    ],
  })
  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    logger.info({ signal }, 'shutting down: stopping the app surface, then the backend')
    await supervisor.stop()
    process.exit(0)
  }
  process.once('SIGINT', () => void stop('SIGINT'))
  process.once('SIGTERM', () => void stop('SIGTERM'))
  try {
    await supervisor.start()
  } catch (err) {
    await supervisor.stop()
    throw new ConfigError(`The stack did not start: ${(err as Error).message}`)
  }
}

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

interface SimParts {
  simnet: Simnet
  providers: SimulatedProviders
  port: StorageProviderPort
}

/** The embedded simulated network: its chain in `<DATA_DIR>/simnet/chain.sqlite`, providers' bytes in `<DATA_DIR>/simnet/providers/`. */
function startSimnet(config: Config): SimParts {
  const s = config.service
  const simnet = createSimnet({ seed: s.simnetSeed, speed: s.simnetSpeed, genesis: s.simnetGenesis, stateFile: join(config.dataDir, 'simnet', 'chain.sqlite') })
  const providers = createSimulatedProviders({ simnet, dir: join(config.dataDir, 'simnet', 'providers') })
  return { simnet, providers, port: simnetProviderPort(simnet, providers) }
}

/** In the all-in-one default the gateway asks its own deal service, with the default tenant's key and client address. */
async function linkEmbeddedService(config: Config, service: DealService, serviceUrl: string): Promise<void> {
  const g = config.gateway
  g.serviceUrl ??= serviceUrl
  g.serviceApiKey ??= config.service.apiKey ?? loadOrCreateSecretFile(join(config.service.dataDir, 'api-key'), () => randomSecret()).value
  g.clientAddress ??= service.tenants.byName('default')?.clientAddresses[0]
}

async function runGateway(config: Config, logger: Logger, sim?: SimParts): Promise<Part> {
  const gateway = createGateway(config.gateway, { logger, providers: sim?.port })
  const server = await startServer(gateway.app, config.gateway.port, config.gateway.host, { idleTimeoutMs: config.idleTimeoutMs })
  gateway.startDeals(server.url)
  logger.info({ url: server.url, dataDir: config.gateway.dataDir, deals: gateway.deals !== undefined }, 'gateway listening (WebDAV and POST /file-info)')
  return {
    name: 'gateway',
    server,
    async close() {
      await sim?.providers.close()
      await gateway.close()
    },
  }
}

async function runService(config: Config, logger: Logger, network?: Simnet): Promise<Part & { service: DealService }> {
  const service = await createDealService(config.service, { logger, network })
  if (service.createdApiKey) {
    // Shown once; only its hash is stored (the file beside it is mode 0600).
    process.stdout.write(`\nDeal service API key of tenant "default" (also in ${join(config.service.dataDir, 'api-key')}):\n  ${service.createdApiKey}\n\n`)
  }
  const server = await startServer(service.app, config.service.port, config.service.host, { idleTimeoutMs: config.idleTimeoutMs })
  logger.info({ url: server.url, network: service.network.kind }, 'deal service listening (/public/v1, /private/v1, /openapi.json)')
  return { name: 'service', server, service, close: () => service.close() }
}

async function runBridge(config: Config, logger: Logger): Promise<Part> {
  if (!config.bridge.gatewayUrl) throw new ConfigError('--role app needs GATEWAY_URL')
  const bridge = await createBridge(config.bridge, { logger })
  const server = await startServer(bridge.listener, config.bridge.port, config.bridge.host, { idleTimeoutMs: config.idleTimeoutMs, onClientError: bridge.onClientError })
  const mode = config.bridge.filesync === 'nextcloud' ? `beside Nextcloud at ${config.bridge.nextcloudUrl} (OCS routes only)` : 'WebDAV files, OCS'
  logger.info({ url: server.url, gateway: config.bridge.gatewayUrl }, `app surface listening (${mode})`)
  return { name: 'app', server, close: () => bridge.close() }
}

main().catch((err) => {
  if (err instanceof ConfigError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    process.stderr.write(`${err.message}\n\nRun with --help for usage.\n`)
  } else {
    process.stderr.write(`Failed to start: ${err?.stack ?? err}\n`)
  }
  process.exit(1)
})
