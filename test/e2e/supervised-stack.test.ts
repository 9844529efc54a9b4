/**
 * `npm start` as users run it: the app surface, the gateway and the deal
 * service are separate processes under one supervisor. Killing one outright
 * leaves the others answering, and the supervisor brings it back on the same
 * port.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { basicAuth, startStack, type RunningStack } from '../../scripts/lib/stack.ts'

const PASSWORD = 'supervised-admin-password'

describe('the supervised stack', () => {
  let stack: RunningStack
  let dataDir: string
  const auth = basicAuth('admin', PASSWORD)
  const metadata = () =>
    fetch(`${stack.appUrl}/ocs/v2.php/apps/gateway/get-file-metadata`, {
      method: 'POST',
      headers: { authorization: auth, 'ocs-apirequest': 'true', 'content-type': 'application/json' },
      body: JSON.stringify({ filePath: '/kept.txt' }),
    })
  /** The pid a part logged its "listening" line with. */
  const pidOf = (message: RegExp) => {
    const line = stack
      .output()
      .split('\n')
      .reverse()
      .find((l) => message.test(l))
    return Number(JSON.parse(line!).pid)
  }

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'e2e-supervised-'))
    stack = await startStack({ DATA_DIR: dataDir, ADMIN_PASSWORD: PASSWORD }, [], undefined, { readyTimeoutMs: 170_000 })
    const put = await fetch(`${stack.appUrl}/remote.php/dav/files/admin/kept.txt`, {
      method: 'PUT',
      headers: { authorization: auth },
      body: 'still here',
    })
    expect(put.status).toBe(201)
    // Four processes start one after the other; on a loaded two-core machine each takes tens of seconds to load.
  }, 180_000)
  afterAll(async () => {
    await stack?.stop()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('runs the app surface, the gateway, the deal service and the simulated network in four processes besides the supervisor', () => {
    const pids = new Set([
      stack.child.pid,
      pidOf(/app surface listening/),
      pidOf(/gateway listening/),
      pidOf(/deal service listening/),
      pidOf(/simulated network: chain serving/),
    ])
    expect(pids.size).toBe(5)
  })

  it('says where to go, how to log in and how to stop once everything listens', () => {
    const banner = stack.output().slice(stack.output().indexOf('is running'))
    expect(banner).toContain(`Files and the sidebar tab:  ${stack.appUrl}/`)
    expect(banner).toContain('admin, password ADMIN_PASSWORD, as set at the first start')
    expect(banner).toContain(`${stack.appUrl}/remote.php/dav/files/admin/`)
    expect(banner).toContain('Stop with Ctrl-C')
  })

  const rpcUrl = () => /Simulated chain \(Lotus RPC\): (http:\S+)/.exec(stack.output())![1]
  const chainHead = async () => {
    const res = await fetch(rpcUrl(), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'Filecoin.ChainHead', params: [] }),
    })
    return ((await res.json()) as { result: { Height: number } }).result.Height
  }

  it('serves the simulated chain as Lotus JSON-RPC, where the gateway reads its deals', async () => {
    expect(await chainHead()).toBeGreaterThan(0)
    // The gateway reads the chain at that very URL (SIMNET_RPC_URL), as it would read a Lotus node.
    const gatewayLine = stack
      .output()
      .split('\n')
      .find((l) => l.includes('gateway listening'))!
    expect(JSON.parse(gatewayLine).chain).toBe(rpcUrl())
  })

  it('keeps the app surface answering while the gateway is killed, and brings the gateway back on its port', async () => {
    const backend = pidOf(/gateway listening/)
    process.kill(backend, 'SIGKILL')
    // The app surface itself never went away; the gateway behind it is missing for a moment.
    expect((await fetch(`${stack.appUrl}/status.php`)).status).toBe(200)
    await expect.poll(async () => (await metadata()).status, { timeout: 90_000, interval: 200 }).toBe(200)
    expect(pidOf(/gateway listening/)).not.toBe(backend)
    expect((await (await metadata()).json()).metadata.file.cid).toMatch(/^baf/)
  }, 120_000)

  it('keeps the gateway and the app answering while the deal service is killed, and brings it back', async () => {
    const service = pidOf(/deal service listening/)
    process.kill(service, 'SIGKILL')
    expect((await metadata()).status).toBe(200)
    await expect.poll(() => pidOf(/deal service listening/), { timeout: 90_000, interval: 200 }).not.toBe(service)
    const ticker = await fetch(`${stack.serviceUrl}/public/v1/ticker/get-latest`, { method: 'POST' })
    expect(ticker.status).toBe(200)
    // The chain's RPC came back where the gateway reads it.
    await expect.poll(() => chainHead().catch(() => 0), { timeout: 10_000, interval: 200 }).toBeGreaterThan(0)
  }, 120_000)

  it('brings a killed simulated network back where the parts read it, the deal service answering meanwhile', async () => {
    const network = pidOf(/simulated network: chain serving/)
    process.kill(network, 'SIGKILL')
    expect((await fetch(`${stack.serviceUrl}/public/v1/ticker/get-latest`, { method: 'POST' })).status).toBe(200)
    await expect.poll(() => pidOf(/simulated network: chain serving/), { timeout: 90_000, interval: 200 }).not.toBe(network)
    // The same RPC URL as the banner printed and the gateway reads.
    await expect.poll(() => chainHead().catch(() => 0), { timeout: 10_000, interval: 200 }).toBeGreaterThan(0)
  }, 120_000)

  it('restarts a killed app surface on the same address', async () => {
    const app = pidOf(/app surface listening/)
    process.kill(app, 'SIGKILL')
    await expect
      .poll(async () => (await fetch(`${stack.appUrl}/status.php`).catch(() => undefined))?.status, { timeout: 90_000, interval: 200 })
      .toBe(200)
    expect(pidOf(/app surface listening/)).not.toBe(app)
    expect((await metadata()).status).toBe(200)
  }, 120_000)

  // Last: it ends the stack.
  it('stops every part when npm start itself is killed outright, leaving no orphan behind', async () => {
    const parts = [
      pidOf(/app surface listening/),
      pidOf(/gateway listening/),
      pidOf(/deal service listening/),
      pidOf(/simulated network: chain serving/),
    ]
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0)
        return true
      } catch {
        return false
      }
    }
    process.kill(stack.child.pid!, 'SIGKILL')
    await expect.poll(() => parts.filter(alive), { timeout: 90_000, interval: 200 }).toEqual([])
  }, 120_000)
})
