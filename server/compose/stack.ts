import { existsSync, readFileSync } from 'node:fs'
import { ConfigError, type Config } from '../shared/config.ts'
import { speedInWords, spedUpClock } from '../shared/epochs.ts'
import { createLinePrettifier, logFormatFor, type Logger } from '../shared/logger.ts'
import { loadOrCreateSecretFile, randomSecret } from '../shared/secrets.ts'
import { createSupervisor, type PartReady } from '../supervisor.ts'
import { walletSigner } from './local-chain.ts'
import { ensurePortsFree, stackPorts } from './ports.ts'

const PORT_VARIABLE: Record<string, string> = { service: 'SERVICE_PORT', gateway: 'GATEWAY_PORT', app: 'PORT' }

/**
 * `--role all`: the deal service, the gateway and the app surface as three
 * processes of `entry` (each with its `--role`), so a CPU storm or a crash in
 * one does not stall or end another. A part that dies is restarted on the
 * port it had; the parts' log lines come out as one stream. The gateway is
 * linked to the deal service with the default tenant's key and client
 * address, the app to the gateway with a service account, all kept in DATA_DIR.
 */
export async function superviseStack(config: Config, logger: Logger, entry: string): Promise<void> {
  await ensurePortsFree(stackPorts(config))
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
          const focRpcUrl = ready.get('service')?.focRpcUrl
          return {
            ...samePort('service', ready),
            ...(typeof rpcUrl === 'string' ? { SIMNET_RPC_PORT: new URL(rpcUrl).port } : {}),
            ...(typeof focRpcUrl === 'string' ? { SIMFOC_RPC_PORT: new URL(focRpcUrl).port } : {}),
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
            SERVICE_API_KEY:
              config.gateway.serviceApiKey ?? config.service.apiKey ?? readFileSync(config.files.serviceApiKey, 'utf8').trim(),
            ...(typeof service.rpcUrl === 'string' ? { SIMNET_RPC_URL: service.rpcUrl } : {}),
            // Where the simulated Onchain Cloud listens (SIMFOC_RPC_PORT may have been 0: any free port).
            ...(typeof service.focRpcUrl === 'string' ? { SIMFOC_RPC_URL: service.focRpcUrl } : {}),
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
    logger.info({ signal }, 'shutting down: the app surface, then the gateway, then the deal service')
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

/** What a person needs after `npm start`: where to go, how to log in, how to sync, how to stop. */
function startBanner(config: Config, ready: ReadonlyMap<string, PartReady>): string {
  const app = ready.get('app')!.url
  // The file exists only when the first start generated the password; otherwise ADMIN_PASSWORD made the admin then
  // (a later one is ignored, and the app part says so).
  const password = existsSync(config.files.adminPassword) ? `in ${config.files.adminPassword}` : 'ADMIN_PASSWORD, as set at the first start'
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
    ...(typeof ready.get('service')!.focRpcUrl === 'string'
      ? [`  Simulated Onchain Cloud:    ${ready.get('service')!.focRpcUrl} (FEVM eth_* RPC; PDP providers on loopback)`]
      : []),
    '',
    '  Stop with Ctrl-C.',
    '',
    '',
  ].join('\n')
}
