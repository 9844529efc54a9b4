import { readFileSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { parseArgs } from 'node:util'

const HELP = `Usage: npm run test:durations -- [report.json]

Writes test/durations.json: the seconds each test file over 5 s took in a
full run, read from vitest's JSON report (default test/artifacts/vitest.json,
which .ci/run writes). The test sequencer (test/sequencer.ts) starts the
longest files first on a fresh clone, where vitest has no cache of its own.
`

const { values, positionals } = parseArgs({ options: { help: { type: 'boolean', short: 'h' } }, allowPositionals: true })
if (values.help) {
  process.stdout.write(HELP)
  process.exit(0)
}
const root = join(import.meta.dirname, '..')
const report = JSON.parse(readFileSync(positionals[0] ?? join(root, 'test', 'artifacts', 'vitest.json'), 'utf8')) as {
  testResults: { name: string; startTime: number; endTime: number }[]
}
/** A file's path from the repository's root, wherever the run was (test/ holds no folder named test). */
const fromRoot = (file: string) => (file.startsWith(root) ? relative(root, file) : file.slice(file.lastIndexOf('/test/') + 1))
const seconds = Object.fromEntries(
  report.testResults
    .map((t) => [fromRoot(t.name), Math.round((t.endTime - t.startTime) / 1000)] as const)
    .filter(([, s]) => s > 5)
    .sort((a, b) => b[1] - a[1]),
)
writeFileSync(join(root, 'test', 'durations.json'), `${JSON.stringify(seconds, null, 2)}\n`)
process.stdout.write(`test/durations.json: ${Object.keys(seconds).length} files over 5 s\n`)
