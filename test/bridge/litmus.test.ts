import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ALICE, startBridgeOnRealGateway } from './helpers.ts'

const LITMUS = '/usr/bin/litmus'

interface LitmusRun {
  code: number
  output: string
}

/** Runs litmus without blocking the event loop: the bridge under test lives in this process. */
function litmus(url: string, user: string, password: string, suites: string, cwd: string): Promise<LitmusRun> {
  return new Promise((resolve) => {
    execFile(LITMUS, [url, user, password], { cwd, env: { ...process.env, TESTS: suites }, timeout: 120_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0
      resolve({ code, output: stdout + stderr })
    })
  })
}

describe.skipIf(!existsSync(LITMUS))('litmus WebDAV compliance through the bridge', () => {
  let t: Awaited<ReturnType<typeof startBridgeOnRealGateway>>
  let cwd: string
  beforeAll(async () => {
    t = await startBridgeOnRealGateway()
    // litmus writes debug.log into its working directory.
    cwd = mkdtempSync(join(tmpdir(), 'litmus-'))
  })
  afterAll(async () => {
    await t.close()
    rmSync(cwd, { recursive: true, force: true })
  })

  it.each([['/remote.php/dav/files/alice/'], ['/remote.php/webdav/']])(
    'passes basic, copymove, props and locks on %s with 0 failures',
    async (path) => {
      const run = await litmus(`${t.url}${path}`, ALICE.user, ALICE.password, 'basic copymove props locks', cwd)
      const summaries = [...run.output.matchAll(/summary for `(\w+)': of (\d+) tests run: (\d+) passed, (\d+) failed/g)]
      expect(summaries.map((m) => m[1])).toEqual(['basic', 'copymove', 'props', 'locks'])
      for (const m of summaries) expect({ suite: m[1], failed: Number(m[4]) }).toEqual({ suite: m[1], failed: 0 })
      expect(run.code).toBe(0)
    },
  )
})
