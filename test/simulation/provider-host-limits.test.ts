/**
 * A simulated storage provider's libp2p host (Boost-like on TCP, Curio-like
 * on WebSocket) under a flood of local connections that never finish a
 * handshake: past its cap a connection is closed at once, one held is cut at
 * its handshake deadline, and a real client is served once the flood is gone.
 */
import { randomBytes } from 'node:crypto'
import { connect, type Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createDialer, createProviderHost, exchange, handleQuery, type Libp2p } from '../../server/simulation/simnet/provider-libp2p.ts'
import {
  DEFAULT_PROVIDER_HOST_LIMITS,
  limitsForHosts,
  type ProviderHostLimits,
} from '../../server/simulation/simnet/provider-host-limits.ts'
import { encode } from '../../server/simulation/simnet/provider-wire.ts'

const cleanups: (() => Promise<unknown> | unknown)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

const PROTOCOL = '/test/limits/1.0.0'
const FLOOD = 20

const CAP = 2

/** Small caps, the socket cap and the handshake cap alike; the deadlines long unless a test shortens them. */
const limits = (deadlineMs = 120_000): Partial<ProviderHostLimits> => ({
  maxConnections: 4,
  maxPendingConnections: CAP,
  maxSockets: CAP,
  handshakeTimeoutMs: deadlineMs,
  upgradeRequestTimeoutMs: deadlineMs,
})

async function host(transport: 'tcp' | 'ws', l: Partial<ProviderHostLimits>, lines: string[] = []) {
  const node = await createProviderHost({
    identitySeed: randomBytes(32),
    transport,
    listenHost: '127.0.0.1',
    limits: l,
    logger: { warn: (_fields: unknown, message?: string) => void lines.push(String(message)) },
  })
  cleanups.push(() => node.stop())
  await handleQuery(node, PROTOCOL, () => encode({ answered: true }))
  const port = Number(
    node
      .getMultiaddrs()[0]
      .getComponents()
      .find((c) => c.name === 'tcp')?.value,
  )
  return { node, port }
}

/** `closed` is Node's own: true once the socket emitted 'close'. */
type Raw = Socket & { gone: Promise<void> }

/** A TCP connection that never starts a libp2p handshake (on WebSocket, sends `partial` at most: no upgrade request). */
function raw(port: number, partial?: string): Promise<Raw> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' }) as Raw
    cleanups.push(() => socket.destroy())
    socket.gone = new Promise<void>((done) => socket.once('close', () => done()))
    socket.on('error', () => undefined)
    socket.once('connect', () => {
      if (partial) socket.write(partial)
      resolve(socket)
    })
    // Closed before its connect event: refused at once, as good as closed after it.
    socket.once('close', () => resolve(socket))
  })
}

async function flood(port: number, partial?: string): Promise<Raw[]> {
  const sockets: Raw[] = []
  for (let i = 0; i < FLOOD; i++) sockets.push(await raw(port, partial))
  return sockets
}

/** Waits until at least `count` of `sockets` are closed (the test's own timeout bounds the wait). */
async function closedAtLeast(sockets: Raw[], count: number): Promise<void> {
  while (sockets.filter((s) => s.closed).length < count) await Promise.race(sockets.filter((s) => !s.closed).map((s) => s.gone))
}

async function served(node: Libp2p): Promise<unknown> {
  const dialer = await createDialer()
  cleanups.push(() => dialer.stop())
  // The host's own address carries its peer id (/p2p/…).
  return exchange(dialer, node.getMultiaddrs()[0], PROTOCOL, null, AbortSignal.timeout(20_000))
}

describe.each(['tcp', 'ws'] as const)('a simulated provider host on %s', (transport) => {
  it('closes connections past its cap at once, while those within it are still held', async () => {
    const { port } = await host(transport, limits())
    const sockets = await flood(port)
    await closedAtLeast(sockets, FLOOD - CAP)
    // The first ones are held (their two-minute deadline is far off), every later one was closed:
    // closed past the cap, not cut at a deadline, which would have cut the first ones first.
    expect(sockets.map((s) => s.closed)).toEqual(sockets.map((_, i) => i >= CAP))
  }, 60_000)

  it('cuts connections that never finish a handshake at its deadline, then serves a real client', async () => {
    const { node, port } = await host(transport, limits(1_500))
    // On WebSocket half of them start an upgrade request and never finish it.
    const sockets = [
      ...(await flood(port)),
      ...(await flood(port, transport === 'ws' ? 'GET / HTTP/1.1\r\nUpgrade: websocket\r\n' : undefined)),
    ]
    await closedAtLeast(sockets, sockets.length)
    expect(await served(node)).toEqual({ answered: true })
  }, 90_000)
})

describe('a simulated provider host on WebSocket under a flood', () => {
  it('tells of refused and cut connections in a few lines, not one per connection', async () => {
    const lines: string[] = []
    const { port } = await host('ws', limits(1_500), lines)
    const sockets = [...(await flood(port)), ...(await flood(port))]
    await closedAtLeast(sockets, sockets.length)
    expect(lines.some((l) => /socket cap reached/.test(l))).toBe(true)
    expect(lines.length).toBeLessThanOrEqual(10)
  }, 90_000)
})

describe("the simulated provider hosts' share of their process's descriptors", () => {
  it("keeps Boost's caps where the open-file limit allows, and shares a low limit among the hosts", () => {
    expect({ ...DEFAULT_PROVIDER_HOST_LIMITS, ...limitsForHosts(20, 20_000) }.maxSockets).toBe(212)
    // A quarter of 1 024 open files among 20 hosts.
    expect(limitsForHosts(20, 1_024).maxSockets).toBe(12)
    expect(limitsForHosts(200, 1_024).maxSockets).toBe(8)
  })
})
