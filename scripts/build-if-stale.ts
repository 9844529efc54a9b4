/**
 * Builds the Nextcloud app's front end (js/) only when it is missing or older
 * than its sources, so that `npm start` stays quick after the first time.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  process.stdout.write(
    "Usage: tsx scripts/build-if-stale.ts\n\nRuns `npm run build` when js/gateway-init.mjs or js/gateway-admin.mjs is missing\nor older than a file under plugin-ui/ or the Vite config, and compiles the simulated\nOnchain Cloud's contracts when they changed (cached). Run by `npm start`.\n",
  )
  process.exit(0)
}

const root = join(import.meta.dirname, '..')
const outputs = ['js/gateway-init.mjs', 'js/gateway-admin.mjs'].map((f) => join(root, f))

function newestSource(dir: string): number {
  let newest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs)
  }
  return newest
}

const sourcesChanged = Math.max(
  newestSource(join(root, 'plugin-ui')),
  statSync(join(root, 'vite.config.ts')).mtimeMs,
  statSync(join(root, 'package.json')).mtimeMs,
)
const stale = outputs.some((f) => !existsSync(f) || statSync(f).mtimeMs < sourcesChanged)
if (stale) {
  process.stdout.write('Building the sidebar tab and admin page (js/)…\n')
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' })
}

// The simulated Onchain Cloud's contracts: compiled once (about 20 s of solc), then cached by their sources' hash.
const { loadFocArtifacts, isCompiled } = await import('../server/simulation/simfoc/contracts/compile.ts')
if (!(await isCompiled())) {
  process.stdout.write("Compiling the simulated Onchain Cloud's contracts (once)…\n")
  await loadFocArtifacts()
}
