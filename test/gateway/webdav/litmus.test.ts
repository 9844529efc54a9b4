import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createGateway, type Gateway } from '../../../server/gateway/index.ts'
import { startServer, type RunningServer } from '../../../server/shared/http.ts'
import { testDatabaseUrl } from '../../helpers/stores.ts'

/**
 * Runs Debian's litmus (the WebDAV compliance suite, driven by neon) against
 * the real gateway: real SQLite file (PostgreSQL with TEST_STORE=postgres),
 * real content store, real HTTP, with and without the gateway's basic auth.
 */
const LITMUS = '/usr/bin/litmus'
const SUITES = ['basic', 'copymove', 'props', 'locks']
const hasLitmus = existsSync(LITMUS)
if (!hasLitmus) console.warn(`litmus tests skipped: ${LITMUS} is not installed (Debian package "litmus")`)

interface Summary {
  run: number
  passed: number
  failed: number
}

/** Runs the suites; resolves with litmus's output and one summary per suite it reported. */
function runLitmus(url: string, credentials: string[]): Promise<{ output: string; summaries: Map<string, Summary> }> {
  // litmus writes debug.log and child.log (megabytes) into its working directory.
  const cwd = mkdtempSync(join(tmpdir(), 'litmus-'))
  return new Promise((resolve, reject) => {
    const child = spawn(LITMUS, ['--keep-going', url, ...credentials], {
      cwd,
      env: { ...process.env, TESTS: SUITES.join(' ') },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (c: Buffer) => (output += c.toString()))
    child.stderr.on('data', (c: Buffer) => (output += c.toString()))
    child.on('error', reject)
    child.on('close', () => {
      rmSync(cwd, { recursive: true, force: true })
      // e.g. "<- summary for `props': of 30 tests run: 30 passed, 0 failed. 100.0%"
      const summaries = new Map<string, Summary>()
      for (const m of output.matchAll(/<- summary for `(\w+)': of (\d+) tests run: (\d+) passed, (\d+) failed/g)) {
        summaries.set(m[1], { run: Number(m[2]), passed: Number(m[3]), failed: Number(m[4]) })
      }
      resolve({ output, summaries })
    })
  })
}

describe.skipIf(!hasLitmus).each([
  { mode: 'without auth', user: undefined, password: undefined },
  { mode: 'with basic auth', user: 'bridge', password: 's3cret-for-litmus' },
])('litmus against the real gateway ($mode)', ({ user, password }) => {
  let dataDir: string
  let gateway: Gateway
  let server: RunningServer

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'gateway-litmus-'))
    gateway = await createGateway(
      {
        host: '127.0.0.1',
        port: 0,
        dataDir,
        databaseUrl: await testDatabaseUrl('gateway'),
        user,
        password,
        groupSize: 1024 * 1024,
        groupIdleSeconds: 3600,
      },
      { logger: pino({ level: 'silent' }) },
    )
    server = await startServer(gateway.app, 0)
    // litmus works in `<url>litmus/`, so its parent must exist.
    const auth: Record<string, string> = user ? { Authorization: 'Basic ' + Buffer.from(`${user}:${password}`).toString('base64') } : {}
    const res = await fetch(`${server.url}/litmus-root/`, { method: 'MKCOL', headers: auth })
    expect(res.status).toBe(201)
  })

  afterAll(async () => {
    await server?.close(1000)
    await gateway?.close()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it(`passes ${SUITES.join(', ')} with no failures`, async () => {
    const { output, summaries } = await runLitmus(`${server.url}/litmus-root/`, user ? [user, password!] : [])
    for (const suite of SUITES) {
      const s = summaries.get(suite)
      expect(s, `no summary for ${suite}:\n${output}`).toBeDefined()
      expect(s!.failed, `${suite} failed:\n${output}`).toBe(0)
      expect(s!.run).toBeGreaterThan(2) // more than init/begin: the suite really ran
    }
  }, 120_000)
})
