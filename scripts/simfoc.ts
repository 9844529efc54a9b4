import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { loadConfig } from '../server/shared/config.ts'
import { createLogger, logFormatFor } from '../server/shared/logger.ts'
import { approveOnSimulatedFoc } from '../server/simulation/simfoc/index.ts'
import { ProviderNotFunded, runStandaloneProvider } from '../server/simulation/simfoc/standalone-provider.ts'

const HELP = `Usage: npm run simfoc -- <command> [options]

The simulated Onchain Cloud's parts, on their own.

Commands:
  provider --rpc URL --contracts FILE [--dir DIR] [--port N] [--name NAME]
        runs one simulated Curio PDP provider against the FEVM chain at URL
        whose contracts FILE names (a devnet's addresses: foc-devnet's
        devnet-info.json, or a stack's DATA_DIR/simfoc/contracts.json). At its
        first start it makes a key in DIR (default ./simfoc-provider) and says
        its address: send it FIL for the registration fee and gas. It then
        registers itself in the chain's provider registry, as Curio does, and
        serves the PDP API until stopped (Ctrl-C). Clients use it once the
        warm storage service's owner approves it.
  approve ID [--endorse]
        approves provider ID (and endorses it, so it may take first copies) as
        the owner of the simulated Onchain Cloud of \`npm start\` (DATA_DIR,
        SIMFOC_RPC_URL, SIMNET_SEED), which stands in for the devnet's operator.

Options:
  -h, --help   this text

Environment: LOG_LEVEL, LOG_FORMAT; for approve: DATA_DIR, SIMFOC_RPC_URL, SIMNET_SEED.
`

class UsageError extends Error {}

/**
 * The warm storage service's proxy in a devnet's addresses file, ours (`fwss`) or foc-devnet's
 * devnet-info.json (`info.contracts.fwss_service_proxy_addr`): a provider reads the rest from it.
 */
function fwssOf(file: { fwss?: unknown; info?: { contracts?: { fwss_service_proxy_addr?: unknown } } }): `0x${string}` {
  const fwss = file.fwss ?? file.info?.contracts?.fwss_service_proxy_addr
  if (typeof fwss !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(fwss))
    throw new Error("names no warm storage service: neither `fwss` nor foc-devnet's `info.contracts.fwss_service_proxy_addr`")
  return fwss as `0x${string}`
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      rpc: { type: 'string' },
      contracts: { type: 'string' },
      dir: { type: 'string', default: 'simfoc-provider' },
      port: { type: 'string' },
      name: { type: 'string' },
      endorse: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  })
  const [command, arg] = positionals
  if (values.help || !command) {
    process.stdout.write(HELP)
    if (!values.help) process.exitCode = 2
    return
  }
  if (command === 'approve') {
    if (!arg || !/^\d+$/.test(arg)) throw new UsageError('approve needs a provider ID, e.g. `npm run simfoc -- approve 4`')
    const config = loadConfig()
    const contracts = JSON.parse(readFileSync(join(config.files.simfoc, 'contracts.json'), 'utf8'))
    const rpcUrl = config.onchainCloud.simulatedRpcUrl
    await approveOnSimulatedFoc({
      rpcUrl,
      seed: config.service.simnetSeed,
      contracts,
      providerId: BigInt(arg),
      endorse: values.endorse ?? false,
    })
    process.stdout.write(`Provider ${arg} approved${values.endorse ? ' and endorsed' : ''} on the simulated Onchain Cloud at ${rpcUrl}\n`)
    return
  }
  if (command !== 'provider') throw new UsageError(`unknown command ${command}: see --help`)
  if (!values.rpc || !values.contracts) throw new UsageError('provider needs --rpc URL and --contracts FILE')
  if (!/^https?:\/\//.test(values.rpc)) throw new UsageError(`--rpc ${values.rpc} is not an http(s) URL`)
  const port = values.port === undefined ? undefined : Number(values.port)
  if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port <= 65535)) throw new UsageError('--port takes 0 to 65535')
  let fwss
  try {
    fwss = fwssOf(JSON.parse(readFileSync(values.contracts, 'utf8')))
  } catch (err) {
    throw new UsageError(`--contracts ${values.contracts}: ${(err as Error).message}`)
  }
  const logger = createLogger(process.env.LOG_LEVEL ?? 'info', logFormatFor(process.env.LOG_FORMAT as never))
  const provider = await runStandaloneProvider({ rpcUrl: values.rpc, fwss, dir: resolve(values.dir), port, name: values.name, logger })
  logger.info(
    { providerId: Number(provider.providerId), address: provider.address, url: provider.url },
    'simulated Curio PDP provider registered and serving; clients use it once the warm storage service owner approves it',
  )
  const stop = () => {
    provider.close().then(
      () => process.exit(0),
      () => process.exit(1),
    )
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
}

main().catch((err) => {
  const known =
    err instanceof UsageError || err instanceof ProviderNotFunded || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
  process.stderr.write(`${known ? (err as Error).message : `simfoc failed: ${(err as Error).message}`}\n`)
  process.exit(2)
})
