/**
 * Issue 39, item 2: a local flood of the simulated Onchain Cloud's RPC used
 * every descriptor of the deal service's process, which ran it. Under
 * `npm start` the simulated network is now a process of its own, and its
 * ports keep the parts' rules: a flood of its FEVM RPC is refused past the
 * cap while the deal service, the gateway and the app surface go on
 * answering, and a trickled body is cut with 408 there as at the parts.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type RunningStack } from '../../scripts/lib/stack.ts'

type Held = Socket & { answer: () => string; gone: Promise<void> }
const held: Socket[] = []

function open(url: string): Promise<Held> {
  const { port, hostname } = new URL(url)
  return new Promise((resolve, reject) => {
    const socket = connect({ port: Number(port), host: hostname }, () => resolve(Object.assign(socket, { answer: () => text, gone })))
    held.push(socket)
    let text = ''
    socket.on('data', (d) => (text += d))
    const gone = new Promise<void>((done) => socket.once('close', () => done()))
    socket.once('error', reject)
  })
}

/** A POST whose 120-byte body comes a byte a second: two minutes, unless the server cuts it. */
async function trickleBody(url: string): Promise<Held> {
  const socket = await open(url)
  socket.on('error', () => undefined)
  socket.write(`POST ${new URL(url).pathname} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 120\r\n\r\n`)
  void (async () => {
    for (let i = 0; i < 120 && socket.writable; i++) {
      socket.write(' ')
      await new Promise((r) => setTimeout(r, 1_000))
    }
  })()
  return socket
}

/** What a trickled body is answered; asked again while the flood's connections are still being let go (503). */
async function trickled(url: string): Promise<string> {
  for (let tries = 1; ; tries++) {
    const socket = await trickleBody(url)
    await socket.gone
    if (!socket.answer().startsWith('HTTP/1.1 503 ') || tries === 10) return socket.answer()
  }
}

describe('a flood of the simulated network', () => {
  let stack: RunningStack
  let dataDir: string
  const logLine = (message: RegExp) =>
    JSON.parse(
      stack
        .output()
        .split('\n')
        .find((l) => message.test(l))!,
    ) as { pid: number; url: string }
  const pidOf = (message: RegExp) => logLine(message).pid
  // As the simulated Onchain Cloud logged it once it listened (the banner may come a moment later).
  const focRpcUrl = () => logLine(/simulated Onchain Cloud: FEVM chain/).url

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'e2e-network-flood-'))
    stack = await startStack(
      {
        DATA_DIR: dataDir,
        ADMIN_PASSWORD: 'flood-admin-password',
        SIMFOC_PROVIDERS: '1',
        PDP_COPIES: '1',
        BODY_TIMEOUT_SECONDS: '3',
        // The flood's idle connections are held for the whole test, however slow the machine.
        IDLE_TIMEOUT_SECONDS: '300',
        MAX_CONNECTIONS_PER_ADDRESS: '64',
      },
      [],
      undefined,
      { readyTimeoutMs: 170_000 },
    )
    // Four processes start one after the other; on a loaded two-core machine each takes tens of seconds to load.
  }, 180_000)
  afterAll(async () => {
    for (const s of held) s.destroy()
    await stack?.stop()
    rmSync(dataDir, { recursive: true, force: true })
  }, 60_000)

  it('runs the simulated chain and Onchain Cloud in a process that is none of the parts', () => {
    const network = pidOf(/simulated Onchain Cloud: FEVM chain/)
    expect(pidOf(/simulated network: chain serving/)).toBe(network)
    const parts = [pidOf(/deal service listening/), pidOf(/gateway listening/), pidOf(/app surface listening/), stack.child.pid]
    expect(parts).not.toContain(network)
  })

  it('refuses a flood of its FEVM RPC past the cap, while the deal service, the gateway and the app surface answer', async () => {
    // 64 connections that send nothing fill the per-address cap (64 here); every one after is told 503 and closed.
    for (let i = 0; i < 64; i++) await open(focRpcUrl())
    const answers: string[] = []
    for (let i = 0; i < 136; i++) {
      const newcomer = await open(focRpcUrl())
      await newcomer.gone
      answers.push(newcomer.answer().split('\r\n')[0])
    }
    expect(new Set(answers)).toEqual(new Set(['HTTP/1.1 503 Service Unavailable']))

    const ticker = await fetch(`${stack.serviceUrl}/public/v1/ticker/get-latest`, { method: 'POST' })
    expect(ticker.status).toBe(200)
    expect((await fetch(`${stack.appUrl}/status.php`)).status).toBe(200)
    // The gateway answers (its WebDAV asks for credentials), its descriptors untouched by the flood.
    expect((await fetch(`${stack.gatewayUrl}/`, { method: 'PROPFIND' })).status).toBe(401)
  }, 120_000)

  it('cuts a body trickled into its FEVM RPC with 408, as the deal service cuts one', async () => {
    for (const s of held.splice(0)) s.destroy()
    const [chain, service] = await Promise.all([trickled(focRpcUrl()), trickled(`${stack.serviceUrl}/public/v1/ticker/get-latest`)])
    expect(chain).toMatch(/^HTTP\/1\.1 408 /)
    expect(service).toMatch(/^HTTP\/1\.1 408 /)
  }, 120_000)
})
