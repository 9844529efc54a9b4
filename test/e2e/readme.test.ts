/**
 * The README's walk-through, pasted as a newcomer would: its marked commands
 * run in bash against a fresh stack started with the variables the README
 * gives `npm start`, and what they print must be what the README shows. Only
 * the app surface's address changes (tests listen on free ports).
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type RunningStack } from '../../scripts/lib/stack.ts'
import { aimedAt, readmeSteps, startEnv, type ReadmeStep } from '../helpers/readme.ts'

const ROOT = join(import.meta.dirname, '..', '..')
const hasCurl = spawnSync('curl', ['--version']).status === 0
if (!hasCurl) console.warn('Skipping the README walk-through: curl is missing (Debian package "curl"; .ci/run installs it)')
const steps = readmeSteps(readFileSync(join(ROOT, 'README.md'), 'utf8'))
const inSection = (section: string) => steps.filter((step) => step.section === section)

/** Runs a step's commands in bash in `cwd`, as pasted into a terminal, and returns what they print. */
const run = (step: ReadmeStep, stack: RunningStack, cwd: string) =>
  execFileSync('bash', ['-e', '-o', 'pipefail', '-c', aimedAt(step.commands, stack.appUrl)], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })

/** Runs a step that prints JSON again every half second until `done` holds or `ms` pass; the last JSON it printed. */
async function runUntil(step: ReadmeStep, stack: RunningStack, cwd: string, ms: number, done: (out: any) => boolean): Promise<any> {
  const started = Date.now()
  for (;;) {
    const out = JSON.parse(run(step, stack, cwd))
    if (done(out) || Date.now() - started > ms) return out
    await new Promise((r) => setTimeout(r, 500))
  }
}

const kindOf = (step: ReadmeStep) => (startEnv(step.commands) ? 'start' : step.output ? 'command and output' : 'command')

describe.skipIf(!hasCurl)('README: walk-through with curl', () => {
  const walkThrough = inSection('Walk-through with curl')
  // Where the pasted commands run (hello.txt lands here) and the stack keeps its DATA_DIR.
  let dir: string
  let stack: RunningStack | undefined

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'e2e-readme-'))
  })

  afterAll(async () => {
    await stack?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('marks the start, the upload and the metadata request with its output', () => {
    // A marker lost in an edit would silently leave a command unchecked.
    expect(walkThrough.map(kindOf)).toEqual(['start', 'command', 'command and output'])
  })

  it('prints the storage record the README shows for hello.txt', async () => {
    for (const step of walkThrough) {
      const env = startEnv(step.commands)
      if (env) {
        stack = await startStack({ DATA_DIR: join(dir, 'data'), ...env })
        continue
      }
      if (!step.output) {
        run(step, stack!, dir)
        continue
      }
      // A person pastes the next command a few seconds later, when the folders'
      // directory nodes (stored a second after the upload) count in the group too.
      const shown = JSON.parse(step.output)
      const printed = await runUntil(step, stack!, dir, 10_000, (out) => JSON.stringify(out) === JSON.stringify(shown))
      expect(printed).toEqual(shown)
    }
  }, 90_000)

  it('moves the group on to ready for deals after GROUP_IDLE_SECONDS, as the README says next', async () => {
    const request = walkThrough.at(-1)!
    const record = (await runUntil(request, stack!, dir, 60_000, (out) => out.metadata.file.details.state !== 'Staging')).metadata.file
    expect(record.details.state).toBe('Offloading')
    expect(record.details.groups.map((g: { state: string }) => g.state)).toEqual(['ready for deals'])
  }, 90_000)
})
