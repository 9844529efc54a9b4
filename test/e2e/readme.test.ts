/**
 * The README's walk-through, pasted as a newcomer would: its marked commands
 * run in bash against a fresh stack started with the variables the README
 * gives `npm start`, and what they print must be what the README shows. Only
 * the app surface's address changes (tests listen on free ports).
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type RunningStack } from '../../scripts/lib/stack.ts'
import { aimedAt, readmeSteps, sectionText, splitWatch, startEnv, type ReadmeStep } from '../helpers/readme.ts'

const ROOT = join(import.meta.dirname, '..', '..')
const hasCurl = spawnSync('curl', ['--version']).status === 0
if (!hasCurl) console.warn('Skipping the README walk-through: curl is missing (Debian package "curl"; .ci/run installs it)')
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
const steps = readmeSteps(readme)
const inSection = (section: string) => steps.filter((step) => step.section === section)

/** Runs a step's commands in bash in `cwd`, as pasted into a terminal, and returns what they print. */
const run = (step: ReadmeStep, stack: RunningStack, cwd: string) =>
  execFileSync('bash', ['-e', '-o', 'pipefail', '-c', aimedAt(step.commands, stack.appUrl)], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  })

/** Runs a step that prints JSON again every `everyMs` until `done` holds or `ms` pass; the last JSON it printed. */
async function runUntil(
  step: ReadmeStep,
  stack: RunningStack,
  cwd: string,
  ms: number,
  done: (out: any) => boolean,
  everyMs = 500,
): Promise<any> {
  const started = Date.now()
  for (;;) {
    const out = JSON.parse(run(step, stack, cwd))
    if (done(out) || Date.now() - started > ms) return out
    await new Promise((r) => setTimeout(r, everyMs))
  }
}

const kindOf = (step: ReadmeStep) => (startEnv(step.commands) ? 'start' : step.output ? 'command and output' : 'command')

describe('README: the first screen', () => {
  const lines = readme.split('\n')

  it('gets a newcomer from clone to a stored file within its first 30 lines: clone, install, start, upload', () => {
    const firstScreen = lines.slice(0, 30).join('\n')
    for (const command of ['git clone', 'npm install', 'npm start', 'curl -u admin:demo-password -T hello.txt']) {
      expect(firstScreen, command).toContain(command)
    }
  })

  it('links only to files in the repository, each of which exists', () => {
    const targets = [...readme.matchAll(/\]\(([^)#\s]+)[^)]*\)/g)].map((m) => m[1]).filter((t) => !/^https?:/.test(t))
    expect(targets.length).toBeGreaterThan(0)
    for (const target of targets) {
      expect(target, target).not.toMatch(/^\.\.\//)
      expect(existsSync(join(ROOT, target)), target).toBe(true)
    }
    // Nor to web pages: the reference must hold on a clone without internet.
    expect([...readme.matchAll(/\]\((https?:[^)]+)\)/g)].map((m) => m[1])).toEqual([])
  })
})

describe.skipIf(!hasCurl)('README: walk-through with curl', () => {
  // The quick start's start and upload, then the walk-through's record, on the one stack a newcomer started.
  const walkThrough = [...inSection('Quick start'), ...inSection('Walk-through with curl')]
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

describe.skipIf(!hasCurl)('README: deals, offload and reload (walk-through)', () => {
  const section = 'Deals, offload and reload (walk-through)'
  const walkThrough = inSection(section)
  // The state column of the README's "What you see" table, in its order.
  const tableStates = [...sectionText(readme, section).matchAll(/^\| [^|`]+ \| `([^`]+)` \|/gm)].map((m) => m[1])
  let dir: string
  let stack: RunningStack | undefined

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'e2e-readme-deals-'))
  })

  afterAll(async () => {
    await stack?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('marks the start, the upload with its watch and the read-back', () => {
    expect(walkThrough.map(kindOf)).toEqual(['start', 'command', 'command'])
    expect(splitWatch(walkThrough[1].commands).watched).toContain('get-file-metadata')
    expect(tableStates).toEqual(['Staging', 'Offloading', 'Partially offloaded', 'Offloaded'])
  })

  it(
    "takes photo.jpg through the table's states to two retrievable copies, then reads it back from the providers",
    async () => {
      const [start, upload, readBack] = walkThrough
      const dataDir = join(dir, 'data')
      stack = await startStack({ DATA_DIR: dataDir, ...startEnv(start.commands) })
      const { once, watched } = splitWatch(upload.commands)
      run({ ...upload, commands: once }, stack, dir)

      // What `watch -n 2` shows, one state after another (a state held for less than 2 s may be missed).
      const seen: string[] = []
      const record = (
        await runUntil(
          { ...upload, commands: watched! },
          stack,
          dir,
          5 * 60_000,
          (out) => {
            const state = out.metadata.file.details.state
            if (seen.at(-1) !== state) seen.push(state)
            return state === 'Offloaded'
          },
          2000,
        )
      ).metadata.file
      const rows = seen.map((state) => tableStates.indexOf(state))
      expect(
        rows.every((row, i) => row >= 0 && (i === 0 || row > rows[i - 1])),
        `states seen: ${seen.join(' → ')}`,
      ).toBe(true)
      expect(seen[0]).toBe('Staging')
      expect(seen.at(-1)).toBe('Offloaded')
      // The table's last row: the group offloaded, two active retrievable deals, two copies.
      expect(record.details.retrievableCopies).toBe(2)
      for (const group of record.details.groups) {
        expect(group.state).toBe('offloaded')
        expect(group.deals.filter((d: { state: string; isRetrievable: boolean }) => d.state === 'active' && d.isRetrievable)).toHaveLength(
          2,
        )
      }
      // "its local CAR and block file are then deleted"
      expect(readdirSync(join(dataDir, 'gateway', 'groups'))).toEqual([])

      run(readBack, stack, dir)
      const after = JSON.parse(run({ ...upload, commands: watched! }, stack, dir)).metadata.file
      expect(after.details.groups.map((g: { state: string }) => g.state)).toEqual(record.details.groups.map(() => 'offloaded'))
      expect(readdirSync(join(dataDir, 'gateway', 'groups'))).toEqual([])
    },
    7 * 60_000,
  )
})
