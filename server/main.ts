import { parseArgs } from 'node:util'
import { realpathSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { ConfigError, loadConfig, parseRole } from './shared/config.ts'
import { createLogger, logFormatFor } from './shared/logger.ts'
import { isHeldElsewhere, startRole, type StartOptions } from './compose/index.ts'

const HELP = `Usage: npm start -- [--role all|app|gateway|service|network]

Runs the Nextcloud/Filecoin stack on loopback.
  --role all      the whole stack (default): the deal service, the gateway and
                  the app surface as three supervised processes talking over
                  HTTP (and the simulated network as a fourth when no real
                  chain is configured), each restarted if it dies, with one
                  combined log
  --role app      only the app surface; point it at a gateway with GATEWAY_URL
  --role gateway  only the gateway
  --role service  only the deal service (ticker, /private/v1/*, /openapi.json);
                  alone on the simulated network, it runs that network too
  --role network  only the simulated network: its chain's Lotus RPC, its
                  providers and its Onchain Cloud
  -h, --help      this text

NETWORK=devnet LOTUS_URL=http://127.0.0.1:1234/rpc/v1 runs the three parts
against a local Lotus-compatible node and its providers (no simulation): the
clock is read from the node, test (t…) addresses, a loopback
GATEWAY_PUBLIC_URL is allowed while the providers are on loopback too, and a
wallet key is made at the first start. With LOTUS_URL the node's network name
must fit NETWORK (README, "Boost's and Curio's docker devnets").

Configuration is read from the environment; see README.md ("Configuration").
Main variables: PORT (8080), GATEWAY_PORT (9011), HOST (127.0.0.1),
DATA_DIR (./data), GATEWAY_URL, GATEWAY_USER, GATEWAY_PASSWORD, ADMIN_PASSWORD,
NETWORK (simnet|mainnet|calibration|devnet), GROUP_SIZE, GROUP_IDLE_SECONDS, LISTING_WAIT_SECONDS, LOG_LEVEL,
SERVICE_PORT (8090), API_KEY, SIMNET_SEED, SIMNET_SPEED, SIMNET_FAULT_RATE, LOTUS_URL, LOTUS_TOKEN,
SERVICE_URL, SERVICE_API_KEY, GATEWAY_PUBLIC_URL, WALLET, DEAL_CLIENT_ADDRESS,
DEAL_DURATION_DAYS, DEAL_PRICE, DEAL_MAX_PRICE_PER_TIB_MONTH, DEAL_VERIFIED, DEAL_START_OFFSET, DEAL_COPIES,
DEAL_TICK_SECONDS, RETRIEVAL_CHECK_SECONDS, RETRIEVAL_FAILED_CHECKS, DEAL_RENEW_BEFORE_DAYS, RETIRE_AFTER_SECONDS,
FILESYNC (embedded|nextcloud), NEXTCLOUD_URL, NEXTCLOUD_TIMEOUT_MS, TRUST_PROXY.
`

/** `npm start`: reads the arguments and the environment once, then starts what `--role` names (server/compose). */
async function main(options: Partial<StartOptions>): Promise<void> {
  const { values } = parseArgs({
    options: { role: { type: 'string', default: 'all' }, help: { type: 'boolean', short: 'h' } },
    strict: true,
  })
  if (values.help) {
    process.stdout.write(HELP)
    return
  }
  const role = parseRole(values.role)
  const config = loadConfig(process.env, { role })
  const logger = createLogger(config.logLevel, logFormatFor(config.logFormat))
  // Under `--role all` this same file (or a test's entry) is each part's entry point.
  await startRole(role, config, logger, { entry: fileURLToPath(import.meta.url), ...options })
}

/** Runs the process until it is stopped; a crash test's entry calls it with the faults it needs. */
export function start(options: Partial<StartOptions> = {}): void {
  main(options).catch(failedToStart)
}

// `npm start` runs this file; a test's entry imports it and calls start() itself.
if (realpathSync(process.argv[1] ?? '.') === fileURLToPath(import.meta.url)) start()

function failedToStart(err: unknown): never {
  if (err instanceof ConfigError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    process.stderr.write(`${(err as Error).message}\n\nRun with --help for usage.\n`)
  } else if (isHeldElsewhere(err)) {
    process.stderr.write(`${err.message}\n`)
  } else {
    process.stderr.write(`Failed to start: ${(err as Error | undefined)?.stack ?? err}\n`)
  }
  process.exit(1)
}
