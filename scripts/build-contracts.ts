/**
 * Compiles the simulated Onchain Cloud's stand-in contracts
 * (server/simulation/simfoc/contracts/*.sol) into the build cache, so that the
 * first test or `npm start` on the simulated network does not pay for solc.
 */
import { parseArgs } from 'node:util'
import {
  CACHE_DIR,
  ContractCompileError,
  loadFocArtifacts,
  readFocSources,
  sourcesKey,
} from '../server/simulation/simfoc/contracts/compile.ts'

const HELP = `Usage: npm run build:contracts -- [--json]

Compiles every server/simulation/simfoc/contracts/*.sol with solc 0.8.30 (the npm
package; EVM cancun, optimizer on) and keeps the ABIs and bytecode in
node_modules/.cache/simfoc/<sha256 of the sources and settings>.json. Nothing
is compiled when that file is already there. Prints each contract with its
bytecode size; solc's errors, if any, go to stderr and the exit code is 1.

Options:
  --json      print {cache, contracts: {name: bytes}} instead of lines
  -h, --help  this text
`

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } })
  if (values.help) {
    process.stdout.write(HELP)
    return
  }
  const cache = `${CACHE_DIR}${sourcesKey(await readFocSources())}.json`
  const artifacts = await loadFocArtifacts()
  const sizes = Object.fromEntries(Object.entries(artifacts).map(([name, { bytecode }]) => [name, (bytecode.length - 2) / 2]))
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ cache, contracts: sizes }, null, 2)}\n`)
    return
  }
  for (const [name, bytes] of Object.entries(sizes)) process.stdout.write(`${name.padEnd(40)} ${bytes} bytes\n`)
  process.stdout.write(`cache: ${cache}\n`)
}

main().catch((err) => {
  const known = err instanceof ContractCompileError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
  process.stderr.write(`${known ? (err as Error).message : `build:contracts failed: ${(err as Error).stack}`}\n`)
  process.exit(1)
})
