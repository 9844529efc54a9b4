/**
 * The simulated Onchain Cloud's ports (its FEVM RPC, each Curio-like
 * provider's API) under the parts' connection rules: past the cap a
 * newcomer gets 503 at once, a body trickled in is cut with 408 at the
 * parts' body deadline; and a provider leaves its saved port when the stack
 * is now configured on it or another process holds it.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { connect, createServer, type AddressInfo, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Address } from 'viem'
import { afterEach, describe, expect, it } from 'vitest'
import { createConnectionBudget } from '../../server/shared/connection-cap.ts'
import { freePortAvoiding } from '../../server/shared/free-port.ts'
import type { ServerOptions } from '../../server/shared/http.ts'
import { startEvmNode } from '../../server/simulation/simfoc/evm-node.ts'
import { listenOnSavedPort } from '../../server/simulation/simfoc/index.ts'
import { createPdpProvider } from '../../server/simulation/simfoc/pdp-provider.ts'
import { FakePdpChain } from './simfoc/pdp-provider-fake-chain.ts'

const FWSS: Address = '0x00000000000000000000000000000000000f1055'
const cleanups: (() => Promise<unknown> | unknown)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

/** Small caps and a body deadline of 2 s: the parts' rules, scaled down. */
const rules = (): ServerOptions => ({
  connections: createConnectionBudget({ maxConnections: 50, maxPerAddress: 4 }),
  bodyTimeoutMs: 2_000,
  idleTimeoutMs: 20_000,
})

type Held = Socket & { answer: () => string; gone: Promise<void> }

function open(url: string): Promise<Held> {
  const { port, hostname } = new URL(url)
  return new Promise((resolve, reject) => {
    const socket = connect({ port: Number(port), host: hostname }, () => resolve(Object.assign(socket, { answer: () => text, gone })))
    cleanups.push(() => socket.destroy())
    let text = ''
    socket.on('data', (d) => (text += d))
    const gone = new Promise<void>((done) => socket.once('close', () => done()))
    socket.once('error', reject)
  })
}

/** Sends a POST whose 120-byte body comes a byte a second: two minutes, unless the server cuts it. */
async function trickleBody(url: string, path: string): Promise<Held> {
  const socket = await open(url)
  socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 120\r\n\r\n`)
  void (async () => {
    for (let i = 0; i < 120 && socket.writable; i++) {
      socket.write(' ')
      await new Promise((r) => setTimeout(r, 1_000))
    }
  })()
  return socket
}

/** Holds `count` connections that send nothing, then opens one more. */
async function oneOverTheCap(url: string, count: number): Promise<Held> {
  for (let i = 0; i < count; i++) await open(url)
  const newcomer = await open(url)
  await newcomer.gone
  return newcomer
}

describe("the simulated Onchain Cloud's FEVM RPC", () => {
  const node = async () => {
    const n = await startEvmNode({ http: rules() })
    cleanups.push(() => n.close())
    return n
  }

  it('answers a connection over the per-address cap 503 with a JSON-RPC error, and closes it', async () => {
    const { url } = await node()
    const newcomer = await oneOverTheCap(url, 4)
    expect(newcomer.answer()).toMatch(/^HTTP\/1\.1 503 /)
    expect(JSON.parse(newcomer.answer().split('\r\n\r\n')[1]).error.message).toMatch(/Too many connections/)
  })

  it('cuts a body trickled a byte a second with 408 at the body deadline', async () => {
    const { url } = await node()
    const slow = await trickleBody(url, '/rpc/v1')
    await slow.gone
    expect(slow.answer()).toMatch(/^HTTP\/1\.1 408 /)
    expect(slow.answer()).toContain('"jsonrpc":"2.0"')
  }, 60_000)

  it('still answers its clients while strangers hold connections up to the cap', async () => {
    const { url } = await node()
    for (let i = 0; i < 3; i++) await open(url)
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
    })
    expect(res.status).toBe(200)
  })
})

describe('a simulated Curio PDP provider', () => {
  const provider = async (http: ServerOptions = rules()) => {
    const dir = await mkdtemp(join(tmpdir(), 'pdp-rules-'))
    const p = await createPdpProvider({ dir, chain: new FakePdpChain(), recordKeepers: [FWSS], pollMs: 0, http })
    cleanups.push(() => rm(dir, { recursive: true, force: true }))
    cleanups.push(() => p.close())
    return p
  }

  it('answers a connection over the cap 503 in plain text, as Go writes an error', async () => {
    const p = await provider()
    const newcomer = await oneOverTheCap(await p.listen(), 4)
    expect(newcomer.answer()).toMatch(/^HTTP\/1\.1 503 /)
    expect(newcomer.answer()).toContain('Content-Type: text/plain')
  })

  it('cuts a trickled body with 408 at the body deadline', async () => {
    const p = await provider()
    const slow = await trickleBody(await p.listen(), '/pdp/piece')
    await slow.gone
    expect(slow.answer()).toMatch(/^HTTP\/1\.1 408 /)
  }, 60_000)

  it('leaves its saved port for another when the stack is now configured on it', async () => {
    const p = await provider()
    const saved = await freePortAvoiding('127.0.0.1', new Set())
    const url = await listenOnSavedPort(p, saved, new Set([saved]))
    expect(Number(new URL(url).port)).not.toBe(saved)
  })

  it('leaves its saved port for another when another process holds it', async () => {
    const holder = createServer()
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', () => resolve()))
    cleanups.push(() => new Promise<void>((resolve) => holder.close(() => resolve())))
    const saved = (holder.address() as AddressInfo).port
    const url = await listenOnSavedPort(await provider(), saved, new Set())
    expect(Number(new URL(url).port)).not.toBe(saved)
  })

  it('listens on its saved port when it is free and not configured', async () => {
    const saved = await freePortAvoiding('127.0.0.1', new Set())
    const url = await listenOnSavedPort(await provider(), saved, new Set([saved + 1]))
    expect(Number(new URL(url).port)).toBe(saved)
  })
})
