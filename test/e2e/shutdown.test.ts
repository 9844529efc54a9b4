import { afterAll, describe, expect, it } from 'vitest'
import { randomBytes } from 'node:crypto'
import { request } from 'node:http'
import { connect } from 'node:net'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startPart, startStack, basicAuth, type RunningStack } from '../../scripts/lib/stack.ts'

const PASSWORD = 'shutdown-password-1'

describe('graceful shutdown', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'shutdown-'))
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

  it('finishes an upload that is in flight when SIGTERM arrives, then exits 0', async () => {
    const stack = await startStack({ DATA_DIR: dataDir, ADMIN_PASSWORD: PASSWORD })
    const body = randomBytes(2 * 1024 * 1024)
    const path = '/remote.php/dav/files/admin/in-flight.bin'
    let exited: Promise<number | null> | undefined
    const answered = new Promise<number>((resolve, reject) => {
      const req = request(
        stack.appUrl + path,
        {
          method: 'PUT',
          headers: { authorization: basicAuth('admin', PASSWORD), 'content-length': body.length },
        },
        (res) => {
          res.resume()
          resolve(res.statusCode!)
        },
      )
      req.on('error', reject)
      // First half now, the rest only after the stack was told to stop.
      req.write(body.subarray(0, body.length / 2), () => {
        exited = stack.stop('SIGTERM')
        setTimeout(() => req.end(body.subarray(body.length / 2)), 300)
      })
    })
    expect(await answered).toBe(201)
    expect(await exited).toBe(0)

    // The upload is there, whole, after a restart.
    const again = await startStack({ DATA_DIR: dataDir })
    try {
      const res = await fetch(again.appUrl + path, { headers: { authorization: basicAuth('admin', PASSWORD) } })
      expect(res.status).toBe(200)
      expect(Buffer.from(await res.arrayBuffer()).equals(body)).toBe(true)
    } finally {
      expect(await again.stop()).toBe(0)
    }
    // Two stacks start here, each four processes one after the other: tens of seconds each on a loaded two-core machine.
  }, 180_000)
})

const PARTS = { app: /app surface listening/, gateway: /gateway listening/, service: /deal service listening/ }

/** The pid each part logged its "listening" line with. */
function partPids(output: string): Record<keyof typeof PARTS, number> {
  const pidOf = (message: RegExp) => Number(JSON.parse(output.split('\n').find((l) => message.test(l))!).pid)
  return { app: pidOf(PARTS.app), gateway: pidOf(PARTS.gateway), service: pidOf(PARTS.service) }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** The JSON log lines a process wrote, from `since` on. */
function logLines(output: string, since = 0): { pid: number; part?: string; msg: string }[] {
  return output
    .slice(since)
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l))
}

/**
 * What an unclean stop leaves in the data folder: the gateway's pid file, and
 * SQLite's write-ahead log and shared-memory index, which a clean close
 * checkpoints and deletes.
 */
function leftovers(dataDir: string): string[] {
  return readdirSync(dataDir, { recursive: true, encoding: 'utf8' }).filter((f) => /gateway\.pid$|-wal$|-shm$/.test(f))
}

/** Resolves true when nothing accepts connections at the URL's port any more. */
function refused(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname)
    socket.once('connect', () => {
      socket.destroy()
      resolve(false)
    })
    socket.once('error', () => resolve(true))
  })
}

describe('stopping', () => {
  const dirs: string[] = []
  const newDataDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'stopping-'))
    dirs.push(dir)
    return dir
  }
  const stacks: RunningStack[] = []
  afterAll(() => {
    // A failed test may leave a part behind: it must not hold its ports for the next file.
    for (const stack of stacks) for (const pid of Object.values(partPids(stack.output()))) if (alive(pid)) process.kill(pid, 'SIGKILL')
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  })

  // Generous for a loaded 2-core machine; a clean stop takes well under a second.
  const STOP_BOUND_MS = 8_000

  it('stops every part cleanly when SIGTERM reaches the whole process group, as systemd and container runtimes send it', async () => {
    const dataDir = newDataDir()
    const stack = await startStack({ DATA_DIR: dataDir, ADMIN_PASSWORD: PASSWORD }, [], 'server/main.ts', {
      ownProcessGroup: true,
      readyTimeoutMs: 80_000,
    })
    stacks.push(stack)
    const pids = partPids(stack.output())
    const since = stack.output().length

    process.kill(-stack.child.pid!, 'SIGTERM')
    expect(await stack.exited).toBe(0)
    await expect.poll(() => Object.values(pids).filter(alive), { timeout: STOP_BOUND_MS, interval: 50 }).toEqual([])

    // Each part stopped once and said so, and the supervisor passed every line on before it exited.
    const lines = logLines(stack.output(), since)
    for (const [part, pid] of Object.entries(pids)) {
      expect(
        lines.filter((l) => l.pid === pid && l.msg.startsWith('shutting down')),
        part,
      ).toHaveLength(1)
      expect(
        lines.filter((l) => l.pid === pid && l.msg === 'stopped' && l.part === part),
        part,
      ).toHaveLength(1)
    }
    expect(lines.filter((l) => /died|restart/.test(l.msg))).toEqual([])
    expect(leftovers(dataDir)).toEqual([])
  }, 90_000)

  it('stops every part by itself, freeing its ports, when the supervisor is killed outright', async () => {
    const dataDir = newDataDir()
    const stack = await startStack({ DATA_DIR: dataDir, ADMIN_PASSWORD: PASSWORD }, [], 'server/main.ts', { readyTimeoutMs: 80_000 })
    stacks.push(stack)
    const pids = partPids(stack.output())
    const rpcUrl = /"url":"(http:[^"]+)"[^\n]*simulated network/.exec(stack.output())![1]
    const urls = [stack.appUrl, stack.gatewayUrl, stack.serviceUrl!, rpcUrl]

    // Requests going on, so each part is writing its log lines to the supervisor as it dies.
    let serving = true
    const traffic = [stack.appUrl + '/status.php', stack.serviceUrl + '/openapi.json', stack.gatewayUrl + '/'].map(async (url) => {
      for (let sent = 0; serving && sent < 10_000; sent++)
        await fetch(url).then(
          (res) => res.arrayBuffer(),
          () => undefined,
        )
    })
    await new Promise((resolve) => setTimeout(resolve, 500))

    process.kill(stack.child.pid!, 'SIGKILL')
    await expect.poll(() => Object.values(pids).filter(alive), { timeout: STOP_BOUND_MS, interval: 50 }).toEqual([])
    serving = false
    await Promise.all(traffic)
    expect(await Promise.all(urls.map(refused))).toEqual(urls.map(() => true))
    expect(leftovers(dataDir)).toEqual([])
  }, 90_000)

  it('stops a lone deal service once, and soon, however many times SIGTERM reaches it', async () => {
    const dataDir = newDataDir()
    const service = await startPart('service', { DATA_DIR: dataDir, SERVICE_PORT: '0', SIMNET_RPC_PORT: '0', SIMFOC_RPC_PORT: '0' })
    const since = service.output().length
    // The group's signal, then the one npm (or a supervisor) passes on while the part is already stopping.
    process.kill(service.pid, 'SIGTERM')
    await expect.poll(() => service.output().includes('shutting down'), { timeout: STOP_BOUND_MS, interval: 5 }).toBe(true)
    if (alive(service.pid)) process.kill(service.pid, 'SIGTERM')
    const code = await Promise.race([service.stop(), new Promise((resolve) => setTimeout(() => resolve('still running'), STOP_BOUND_MS))])
    if (code === 'still running') process.kill(service.pid, 'SIGKILL')

    expect(code).toBe(0)
    const lines = logLines(service.output(), since)
    expect(lines.filter((l) => l.msg.startsWith('shutting down'))).toHaveLength(1)
    expect(lines.filter((l) => l.msg === 'stopped')).toHaveLength(1)
    expect(leftovers(dataDir)).toEqual([])
  }, 90_000)
})
