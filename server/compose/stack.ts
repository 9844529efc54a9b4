import { existsSync, readFileSync } from 'node:fs'
import { ConfigError, type Config } from '../shared/config.ts'
import { speedInWords, spedUpClock } from '../shared/epochs.ts'
import { createLinePrettifier, logFormatFor, type Logger } from '../shared/logger.ts'
import { loadOrCreateSecretFile, randomSecret } from '../shared/secrets.ts'
import { createSupervisor, type PartReady, type PartSpec } from '../supervisor.ts'
import { walletSigner } from './local-chain.ts'
import { ensurePortsFree, stackPorts } from './ports.ts'

const PORT_VARIABLE: Record<string, string> = { service: 'SERVICE_PORT', gateway: 'GATEWAY_PORT', app: 'PORT' }

/** The simulated network (`--role network`); restarted, it serves its RPCs where the parts already read them. */
const NETWORK_PART: PartSpec = {
  name: 'network',
  args: ['--role', 'network'],
  env: (ready) => ({ ...rpcPorts(ready.get('network')), LOG_FORMAT: 'json' }),
}

/** Where each part reads the simulated network: the URLs it announced. */
function endpoints(ready: ReadonlyMap<string, PartReady>): Record<string, string> {
  const announced = ready.get('network')
  return {
    ...(typeof announced?.rpcUrl === 'string' ? { SIMNET_RPC_URL: announced.rpcUrl } : {}),
    // Where the simulated Onchain Cloud listens (SIMFOC_RPC_PORT may have been 0: any free port).
    ...(typeof announced?.focRpcUrl === 'string' ? { SIMFOC_RPC_URL: announced.focRpcUrl } : {}),
  }
}

/** The ports of the simulated network's two RPCs as it announced them, for its restart. */
function rpcPorts(announced: PartReady | undefined): Record<string, string> {
  const port = (url: unknown) => (typeof url === 'string' ? new URL(url).port : undefined)
  const chain = port(announced?.rpcUrl)
  const foc = port(announced?.focRpcUrl)
  return { ...(chain ? { SIMNET_RPC_PORT: chain } : {}), ...(foc ? { SIMFOC_RPC_PORT: foc } : {}) }
}

/**
 * `--role all`: the deal service, the gateway and the app surface as three
 * processes of `entry` (each with its `--role`), and before them the
 * simulated network as a fourth when no real chain is configured, so a CPU
 * storm, a crash or a connection flood in one does not stall or end another. A part that dies is restarted on the
 * port it had; the parts' log lines come out as one stream. The gateway is
 * linked to the deal service with the default tenant's key and client
 * address, the app to the gateway with a service account, all kept in DATA_DIR.
 */
export async function superviseStack(config: Config, logger: Logger, entry: string): Promise<void> {
  // The Onchain Cloud alone on a real one (DEAL_COPIES=0 with FOC_RPC_URL) needs no deal service and no simulated network.
  const dealService = config.stack.dealService
  await ensurePortsFree(stackPorts(config).filter((w) => dealService || (w.part !== 'service' && w.part !== 'network')))
  // In the all-in-one default the app surface talks to its own gateway with a service account saved in the data dir.
  const { user, password } = config.stack.gatewayAccount
  const account = {
    GATEWAY_USER: user,
    GATEWAY_PASSWORD: password ?? loadOrCreateSecretFile(config.files.gatewayPassword, () => randomSecret()).value,
  }
  // The gateway's wallet key, made at the first start on the simulated network; the deal service
  // learns its address so that the gateway's deals are the default tenant's.
  const clientAddress = walletSigner(config)?.address
  // A restarted part keeps the port it announced, so the other parts' links stay valid.
  const samePort = (name: string, ready: ReadonlyMap<string, PartReady>): Record<string, string> => {
    const previous = ready.get(name)
    return previous ? { [PORT_VARIABLE[name]]: new URL(previous.url).port } : {}
  }
  // The parts log JSON lines to the supervisor, which shows them as they are or pretty for a person.
  const prettify = logFormatFor(config.logFormat) === 'pretty' ? createLinePrettifier() : (line: string) => line + '\n'
  // The simulated network, when no real chain is configured, runs first and in a process of its own: a local flood of
  // one of its ports then spends its own descriptors, never a part's.
  const simulated = dealService && config.chain.service === 'simnet'
  const supervisor = createSupervisor({
    entry,
    logger,
    output: (line) => process.stdout.write(prettify(line)),
    parts: [
      ...(simulated ? [NETWORK_PART] : []),
      ...(dealService
        ? [
            {
              name: 'service',
              args: ['--role', 'service'],
              env: (ready: ReadonlyMap<string, PartReady>) => ({
                ...samePort('service', ready),
                ...endpoints(ready),
                ...(clientAddress ? { DEAL_CLIENT_ADDRESS: clientAddress } : {}),
                LOG_FORMAT: 'json',
              }),
            },
          ]
        : []),
      {
        name: 'gateway',
        args: ['--role', 'gateway'],
        env: (ready) => {
          const service = ready.get('service')
          return {
            ...account,
            ...samePort('gateway', ready),
            LOG_FORMAT: 'json',
            ...(service
              ? {
                  SERVICE_URL: config.gateway.serviceUrl ?? service.url,
                  // The key the deal service created at its first start (or API_KEY), read once it exists.
                  SERVICE_API_KEY:
                    config.gateway.serviceApiKey ?? config.service.apiKey ?? readFileSync(config.files.serviceApiKey, 'utf8').trim(),
                }
              : {}),
            ...endpoints(ready),
          }
        },
      },
      {
        name: 'app',
        args: ['--role', 'app'],
        env: (ready) => ({
          ...account,
          ...samePort('app', ready),
          LOG_FORMAT: 'json',
          GATEWAY_URL: config.bridge.gatewayUrl ?? ready.get('gateway')!.url,
        }),
      },
    ],
  })
  let stopping = false
  const stop = async (signal: string) => {
    // Once is enough: a second signal (the process group's and npm's) leaves the stop under way alone.
    if (stopping) return
    stopping = true
    logger.info(
      { signal },
      `shutting down: the app surface, then the gateway${dealService ? ', then the deal service' : ''}${simulated ? ', then the simulated network' : ''}`,
    )
    await supervisor.stop()
    process.exit(0)
  }
  // Kept while stopping: without a listener a second signal would end the supervisor before its parts.
  process.on('SIGINT', () => void stop('SIGINT'))
  process.on('SIGTERM', () => void stop('SIGTERM'))
  let ready: ReadonlyMap<string, PartReady>
  try {
    ready = await supervisor.start()
  } catch (err) {
    await supervisor.stop()
    throw new ConfigError(`The stack did not start: ${(err as Error).message}`)
  }
  process.stdout.write(startBanner(config, ready))
}

/** What a person needs after `npm start`: where to go, how to log in, how to sync, which storage routes run, how to stop. */
function startBanner(config: Config, ready: ReadonlyMap<string, PartReady>): string {
  const app = ready.get('app')!.url
  const simulated = ready.get('network')
  const service = ready.get('service')
  // The file exists only when the first start generated the password; otherwise ADMIN_PASSWORD made the admin then
  // (a later one is ignored, and the app part says so).
  const password = existsSync(config.files.adminPassword) ? `in ${config.files.adminPassword}` : 'ADMIN_PASSWORD, as set at the first start'
  const speed = speedInWords(spedUpClock(config.service.simnetGenesis, config.service.simnetSpeed, Date.now() / 1000)) ?? 'in real time'
  // The deal service reads LOTUS_URL; with none running, nothing here does.
  const network =
    service && config.service.lotusUrl
      ? `${config.service.network}, through ${new URL(config.service.lotusUrl).host}`
      : simulated
        ? `simulated network, ${speed}`
        : config.service.network
  return [
    '',
    `  Filecoin storage for Nextcloud is running (${network}).`,
    '',
    `  Files and the sidebar tab:  ${app}/`,
    `  Log in as:                  admin, password ${password}`,
    `  WebDAV (rclone, desktop):   ${app}/remote.php/dav/files/admin/`,
    `  Gateway:                    ${ready.get('gateway')!.url}`,
    `  Storage routes:             ${storageRoutes(config, simulated !== undefined)}`,
    ...(service ? [`  Deal service:               ${service.url}/openapi.json`] : []),
    ...(typeof simulated?.rpcUrl === 'string' ? [`  Simulated chain (Lotus RPC): ${simulated.rpcUrl}`] : []),
    ...(typeof simulated?.focRpcUrl === 'string'
      ? [`  Simulated Onchain Cloud:    ${simulated.focRpcUrl} (FEVM eth_* RPC; PDP providers on loopback)`]
      : []),
    '',
    '  Stop with Ctrl-C.',
    '',
    '',
  ].join('\n')
}

/**
 * The routes the gateway is set to store on, and the chain each reads: "the deal market (…) and Filecoin
 * Onchain Cloud, 2 PDP copies (…)"; the market's absence said with why.
 */
function storageRoutes(config: Config, simulated: boolean): string {
  const { deals, pdp } = config.gateway
  const lotus = config.service.lotusUrl
  const foc = config.onchainCloud.rpcUrl
  const routes: string[] = []
  if (deals?.copies !== 0) routes.push(`the deal market (${lotus ? `Lotus at ${new URL(lotus).host}` : 'simulated network'})`)
  // PDP copies are made on FOC_RPC_URL's Onchain Cloud, else on the simulated one the simulated network runs.
  if (pdp?.copies && (foc || simulated)) {
    const copies = pdp.copies === 1 ? 'a PDP copy' : `${pdp.copies} PDP copies`
    routes.push(`Filecoin Onchain Cloud, ${copies} a group (${foc ? `FEVM at ${new URL(foc).host}` : 'simulated'})`)
  }
  const off =
    deals?.copies !== 0
      ? ''
      : deals.marketOff
        ? '; the deal market is off (no DEAL_MAX_PRICE_PER_TIB_MONTH)'
        : '; the deal market is off (DEAL_COPIES=0)'
  return `${routes.join(' and ') || 'none'}${off}`
}
