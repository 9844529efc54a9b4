import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { ConfigError, loadConfig } from '../server/shared/config.ts'
import { createLogger, logFormatFor } from '../server/shared/logger.ts'
import { getAddress, isAddress, parseUnits, toHex, type Address } from 'viem'
import { EAM_NAMESPACE, parseAddress } from '../server/shared/address.ts'
import {
  approveOnSimulatedFoc,
  fundOnSimulatedFoc,
  migrateSimulatedFoc,
  SimulatedFocUnavailable,
} from '../server/simulation/simfoc/index.ts'
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
  fund ADDRESS FIL USDFC
        the faucet of that simulated Onchain Cloud: sends FIL (for gas) and
        mints USDFC (to pay for storage) to ADDRESS, a 0x… or f410f…/t410f…
        address, e.g. \`fund 0x… 100 1000\`; decimal amounts, 0 for none.
  migrate
        upgrades its warm storage service once more, as its owner upgraded
        calibration's: a new implementation and a new state view, the service
        migrated to that view (migrate(_viewContract)); prints the new view's
        address, also written to DATA_DIR/simfoc/contracts.json.

Options:
  -h, --help   this text

Environment: LOG_LEVEL, LOG_FORMAT; for approve, fund and migrate: DATA_DIR,
SIMFOC_RPC_URL, SIMNET_SEED (the stack's, as \`npm start\` was given them).
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

/** An FEVM account's 0x address, given as such or as its f410f/t410f Filecoin address (FIP-0055). */
function ethAddressOf(text: string): Address {
  if (/^0x[0-9a-fA-F]{40}$/.test(text)) {
    if (!isAddress(text))
      throw new UsageError(`${text}: the mixed-case checksum does not match (EIP-55); give it all lowercase or as printed`)
    return getAddress(text)
  }
  if (text.startsWith('0x')) throw new UsageError(`${text} is not an address: 0x and 40 hex digits`)
  const parsed = parseAddress(text)
  if (!parsed.ok) throw new UsageError(`${text} is not an address: ${parsed.reason}`)
  const { protocol, namespace, payload } = parsed.address
  if (protocol !== 4 || namespace !== String(EAM_NAMESPACE) || payload.length !== 21) {
    throw new UsageError(`${text} is not an FEVM account: give its 0x address, or its f410f/t410f one`)
  }
  return getAddress(toHex(payload.subarray(1)))
}

/** A decimal amount of an 18-decimal token (FIL, USDFC) in its smallest unit. */
function amountOf(text: string, unit: string): bigint {
  if (!/^\d+(\.\d{1,18})?$/.test(text))
    throw new UsageError(`${text} is not an amount of ${unit}: a decimal number such as 100 or 0.5 (at most 18 decimals)`)
  return parseUnits(text, 18)
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
  if (command === 'fund') {
    const [, address, fil, usdfc] = positionals
    if (positionals.length !== 4) throw new UsageError('fund needs ADDRESS FIL USDFC, e.g. `npm run simfoc -- fund 0x… 100 1000`')
    const to = ethAddressOf(address)
    const amounts = { fil: amountOf(fil, 'FIL'), usdfc: amountOf(usdfc, 'USDFC') }
    if (amounts.fil === 0n && amounts.usdfc === 0n) throw new UsageError('fund: both amounts are 0, nothing to send')
    const config = loadConfig()
    const rpcUrl = config.onchainCloud.simulatedRpcUrl
    await fundOnSimulatedFoc({ dir: config.files.simfoc, rpcUrl, seed: config.service.simnetSeed, address: to, ...amounts })
    process.stdout.write(`Sent ${fil} FIL and minted ${usdfc} USDFC to ${to} on the simulated Onchain Cloud at ${rpcUrl}\n`)
    return
  }
  if (command === 'migrate') {
    if (positionals.length !== 1) throw new UsageError('migrate takes no arguments')
    const config = loadConfig()
    const rpcUrl = config.onchainCloud.simulatedRpcUrl
    const view = await migrateSimulatedFoc({ dir: config.files.simfoc, rpcUrl, seed: config.service.simnetSeed })
    process.stdout.write(`The warm storage service of the simulated Onchain Cloud at ${rpcUrl} now points at the view ${view}\n`)
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
    err instanceof UsageError ||
    err instanceof ProviderNotFunded ||
    err instanceof SimulatedFocUnavailable ||
    err instanceof ConfigError ||
    (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
  process.stderr.write(`${known ? (err as Error).message : `simfoc failed: ${(err as Error).message}`}\n`)
  process.exit(2)
})
