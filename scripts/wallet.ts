import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { addressNetworkOf } from '../server/shared/address.ts'
import { loadConfig } from '../server/shared/config.ts'
import { openKeystore, WalletError, type WalletKey } from '../server/network/wallet/keystore.ts'

const HELP = `Usage: npm run wallet -- <command> [--json]

Manages the gateway's Filecoin keys (secp256k1, f1… on mainnet and the
simulated network, t1… on calibration), one file per key (mode 0600) under
DATA_DIR/wallet/ (DATA_DIR defaults to ./data). Private keys are never
printed: only addresses and public keys.

Commands:
  new                  create a key; the first key becomes the default
  import [FILE]        import a key exported by \`lotus wallet export\` (hex),
                       read from FILE or from stdin, never from the command line
  list                 every key's address, the default first
  show [ADDRESS]       one key (the default without ADDRESS)
  default ADDRESS      make this key the one deals are signed with

Options:
  --json               print JSON instead of lines
  -h, --help           this text

Environment: DATA_DIR, NETWORK (simnet|mainnet|calibration: f or t addresses).
`

function main(): void {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } })
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
    else for (const k of keys) process.stdout.write(`${k.address}${k.isDefault ? '  (default)' : ''}${one ? `\n  public key ${k.publicKey}` : ''}\n`)
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
      return print(keystore.list().filter((k) => k.address === arg), true)
    default:
      throw new WalletError(`unknown command "${command}" (new, import, list, show, default)`)
  }
}

try {
  main()
} catch (err) {
  const known = err instanceof WalletError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') || (err as { name?: string }).name === 'ConfigError'
  process.stderr.write(`${known ? (err as Error).message : `wallet failed: ${(err as Error).message}`}\n`)
  process.exit(2)
}
