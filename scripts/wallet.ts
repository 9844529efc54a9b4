import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { addressNetworkOf } from '../server/shared/address.ts'
import { loadConfig } from '../server/shared/config.ts'
import { openKeystore, WalletError, type WalletKey } from '../server/network/wallet/keystore.ts'
import { isNetworkError } from '../server/network/errors.ts'
import { createJsonRpc } from '../server/network/lotus/json-rpc.ts'
import { addMarketBalance } from '../server/network/lotus/messages.ts'
import { FocFundsError } from '../server/network/foc/client.ts'
import { connectOnchainCloud } from '../server/compose/onchain-cloud.ts'
import { formatUnits } from 'viem'
import { fundedUntil, fundedUntilWords } from '../server/shared/funded-until.ts'

const HELP = `Usage: npm run wallet -- <command> [--json]

Manages the gateway's Filecoin keys (secp256k1, f1… on mainnet and the
simulated network, t1… on calibration), one file per key (mode 0600) under
DATA_DIR/wallet/ (DATA_DIR defaults to ./data). Each key is also an FEVM
account, which pays the Filecoin Onchain Cloud route: shown by its 0x address
and the f410f (t410f) address that FIL for it is sent to. Private keys are
never printed: only addresses and public keys.

Commands:
  new                  create a key; the first key becomes the default
  import [FILE]        import a key exported by \`lotus wallet export\` (hex),
                       read from FILE or from stdin, never from the command line
  list                 every key's address, the default first
  show [ADDRESS]       one key (the default without ADDRESS)
  default ADDRESS      make this key the one deals are signed with
  add-escrow FIL [--for ADDRESS]
                       add FIL to the storage market escrow of the default key
                       (or of ADDRESS), paid by the default key: a signed
                       AddBalance message pushed to the node at LOTUS_URL (or
                       SIMNET_RPC_URL); prints the message CID. Paid deals
                       need escrow; verified deals at price 0 do not.

  foc                  the Onchain Cloud account of the default key: its FIL and
                       USDFC, what it has deposited in Filecoin Pay, the rate it
                       pays and how long the deposit lasts at that rate
  deposit AMOUNT USDFC deposit USDFC from the default key into Filecoin Pay (and
                       approve the warm storage service the first time), through
                       the Synapse SDK, at FOC_RPC_URL (NETWORK=calibration or
                       mainnet) or the simulated Onchain Cloud of \`npm start\`

Options:
  --json               print JSON instead of lines
  -h, --help           this text

Environment: DATA_DIR, NETWORK (simnet|mainnet|calibration: f or t addresses),
WALLET (the key that pays), LOTUS_URL and LOTUS_TOKEN (or SIMNET_RPC_URL),
FOC_RPC_URL (or SIMFOC_RPC_URL).
`

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { json: { type: 'boolean' }, for: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  })
  const [command, arg] = positionals
  if (values.help || !command) {
    process.stdout.write(HELP)
    if (!values.help) process.exitCode = 2
    return
  }
  const config = loadConfig()
  const keystore = openKeystore(join(config.dataDir, 'wallet'), addressNetworkOf(config.service.network))
  const print = (keys: WalletKey[], one = false) => {
    if (values.json) process.stdout.write(`${JSON.stringify(one ? keys[0] : keys, null, 2)}\n`)
    else {
      for (const k of keys) {
        const details = one
          ? `\n  Onchain Cloud account ${k.ethAddress} (${k.delegatedAddress})\n  public key ${k.publicKey}`
          : `  ${k.ethAddress}`
        process.stdout.write(`${k.address}${k.isDefault ? '  (default)' : ''}${details}\n`)
      }
    }
  }
  switch (command) {
    case 'new':
      return print([keystore.create()], true)
    case 'import': {
      const exported = readFileSync(arg ?? 0, 'utf8')
      return print([keystore.importLotus(exported)], true)
    }
    case 'list':
      return print(keystore.list())
    case 'show': {
      const keys = keystore.list()
      const key = arg ? keys.find((k) => k.address === arg) : keys.find((k) => k.isDefault)
      if (!key) throw new WalletError(arg ? `no key for ${arg}` : 'no wallet key yet: create one with `npm run wallet -- new`')
      return print([key], true)
    }
    case 'default':
      if (!arg) throw new WalletError('default needs an ADDRESS')
      keystore.setDefault(arg)
      return print(
        keystore.list().filter((k) => k.address === arg),
        true,
      )
    case 'add-escrow': {
      const rpc = config.chain.gatewayRpc
      if (!rpc) throw new WalletError('add-escrow needs a node: set LOTUS_URL (or SIMNET_RPC_URL for the simulated chain)')
      const amount = attoFil(arg)
      const call = createJsonRpc({ url: rpc.url, token: rpc.token, timeoutMs: 30_000 })
      const network = addressNetworkOf(config.service.network)
      const cid = await addMarketBalance(call, keystore.signer(config.wallet.key), amount, network, values.for)
      if (values.json) process.stdout.write(`${JSON.stringify({ message: cid, attoFil: amount.toString() })}\n`)
      else process.stdout.write(`AddBalance of ${arg} FIL pushed: message ${cid}\n`)
      return
    }
    case 'foc':
    case 'deposit': {
      const client = await connectOnchainCloud(config, keystore.evmAccount(config.wallet.key))
      const { chain } = client
      if (command === 'deposit') {
        const [amountText, token] = positionals.slice(1)
        if (token?.toUpperCase() !== 'USDFC')
          throw new WalletError('deposit takes an amount of USDFC, e.g. `npm run wallet -- deposit 10 USDFC`')
        const hash = await client.fund(parseAmount(amountText, 'deposit', 'USDFC'))
        if (values.json) process.stdout.write(`${JSON.stringify({ transaction: hash, usdfc: amountText })}\n`)
        else process.stdout.write(`Deposited ${amountText} USDFC into Filecoin Pay: transaction ${hash}\n`)
      }
      const a = await client.account()
      // On the FEVM chain's own clock, read from its blocks, as the gateway reads it (a simulated one is sped up).
      const funded = a.lockupRatePerEpoch > 0n ? fundedUntil(Number(a.epoch + a.runwayEpochs), await client.chainClock()) : undefined
      if (values.json) {
        const fields = Object.fromEntries(Object.entries(a).map(([k, v]) => [k, v.toString()]))
        const until = funded && {
          fundedUntil: new Date(funded.at * 1000).toISOString(),
          fundedDays: Math.round(funded.networkDays * 100) / 100,
        }
        process.stdout.write(`${JSON.stringify({ account: client.address, ...fields, ...until }, null, 2)}\n`)
      } else {
        process.stdout.write(
          [
            `Onchain Cloud account ${client.address} (${chain.name})`,
            `  wallet:        ${formatUnits(a.walletFil, 18)} FIL, ${formatUnits(a.walletUsdfc, 18)} USDFC`,
            `  Filecoin Pay:  ${formatUnits(a.funds, 18)} USDFC deposited, ${formatUnits(a.availableFunds, 18)} not locked`,
            `  paying:        ${formatUnits(a.lockupRatePerEpoch * 2880n * 30n, 18)} USDFC a month`,
            `  funded until:  ${funded ? fundedUntilWords(funded) : 'nothing stored yet'}`,
            '',
          ].join('\n'),
        )
      }
      return
    }
    default:
      throw new WalletError(`unknown command "${command}" (new, import, list, show, default, add-escrow, foc, deposit)`)
  }
}

/** "1.5" FIL as attoFIL (18 decimals); a WalletError for anything else. */
function attoFil(text: string | undefined): bigint {
  return parseAmount(text, 'add-escrow', 'FIL')
}

/** A decimal amount of an 18-decimal token (FIL, USDFC); a WalletError for anything else. */
function parseAmount(text: string | undefined, command: string, unit: string): bigint {
  const m = /^(\d{1,12})(?:\.(\d{1,18}))?$/.exec(text ?? '')
  if (!m) throw new WalletError(`${command} needs an amount in ${unit}, e.g. 0.5`)
  const amount = BigInt(m[1]) * 10n ** 18n + BigInt((m[2] ?? '').padEnd(18, '0'))
  if (amount === 0n) throw new WalletError('the amount must be more than zero')
  return amount
}

main().catch((err) => {
  const known =
    err instanceof WalletError ||
    err instanceof FocFundsError ||
    err instanceof RangeError ||
    isNetworkError(err, 'REJECTED_BY_CHAIN') ||
    (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') ||
    (err as { name?: string }).name === 'ConfigError'
  process.stderr.write(`${known ? (err as Error).message : `wallet failed: ${(err as Error).message}`}\n`)
  process.exit(2)
})
