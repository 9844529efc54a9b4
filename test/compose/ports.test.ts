/**
 * A port the stack is set to use that another process holds: `npm start`
 * says which setting to change, in one line, before it starts anything (no
 * listen error's stack, no simulated network started and stopped, no restart).
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const run = promisify(execFile)

describe('a port already in use', () => {
  let holder: Server
  let port: number
  let dir: string
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'port-in-use-'))
    holder = createServer()
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve))
    port = (holder.address() as { port: number }).port
  })
  afterAll(() => {
    holder.close()
    rmSync(dir, { recursive: true, force: true })
  })

  /** Runs server/main.ts with every other port free (0) and `held` on the held port; resolves with its exit and output. */
  const start = async (held: string, args: string[] = []) => {
    const env = {
      ...process.env,
      DATA_DIR: join(dir, held),
      PORT: '0',
      GATEWAY_PORT: '0',
      SERVICE_PORT: '0',
      SIMNET_RPC_PORT: '0',
      SIMFOC_RPC_PORT: '0',
      TICKER_ENABLED: 'false',
      [held]: String(port),
    }
    try {
      await run(process.execPath, ['--import', 'tsx', 'server/main.ts', ...args], { env, timeout: 120_000 })
      return { code: 0, stdout: '', stderr: '' }
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string }
      return { code: e.code, stdout: e.stdout, stderr: e.stderr }
    }
  }

  it.each(['PORT', 'GATEWAY_PORT', 'SIMNET_RPC_PORT'])('names %s when npm start finds it taken, and starts nothing', async (held) => {
    const { code, stdout, stderr } = await start(held)
    expect(code).toBe(1)
    expect(stderr.trim()).toBe(
      `${held} ${port} is in use on 127.0.0.1: another process listens there. Stop it, or set ${held} to a free port.`,
    )
    expect(stdout).not.toMatch(/simulated network|part died|restarting/)
  })

  it('says the same for a part started on its own', async () => {
    const { code, stderr } = await start('GATEWAY_PORT', ['--role', 'gateway'])
    expect(code).toBe(1)
    expect(stderr).toContain(`GATEWAY_PORT ${port} is in use on 127.0.0.1`)
    expect(stderr).not.toMatch(/EADDRINUSE|at Server/)
  })
})
