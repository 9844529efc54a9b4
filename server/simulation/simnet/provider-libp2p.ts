import { noise } from '@chainsafe/libp2p-noise'
import { yamux } from '@chainsafe/libp2p-yamux'
import { generateKeyPairFromSeed } from '@libp2p/crypto/keys'
import type { Stream } from '@libp2p/interface'
import { mplex } from '@libp2p/mplex'
import { tcp } from '@libp2p/tcp'
import { webSockets } from '@libp2p/websockets'
import { createLibp2p, type Libp2p } from 'libp2p'
import type { Logger } from '../../shared/logger.ts'
import { noFaults, stall, type FaultPlan } from './faults.ts'
import { connectionManagerLimits, DEFAULT_PROVIDER_HOST_LIMITS, guardWebSockets, type ProviderHostLimits } from './provider-host-limits.ts'
import { decodeOne, ProviderWireError } from './provider-wire.ts'

/**
 * The simulated providers' own libp2p hosts and stream framing, apart from
 * the client's. Boost listens on TCP (boost node/modules/lp2p); Curio only
 * on WebSocket (curio market/libp2p/libp2p.go listens on /ip4/0.0.0.0/tcp/0/ws
 * and announces /dns/<domain>/tcp/443/wss). Both: noise, yamux and mplex.
 * One CBOR value each way per stream, no length prefix (go-cbor-util
 * WriteCborRPC; the Go handlers read with UnmarshalCBOR straight off the
 * stream), the provider closing the stream after its answer.
 */

export type ProviderTransport = 'tcp' | 'ws'
export type { Libp2p, ProviderHostLimits }

const MAX_MESSAGE_BYTES = 1024 * 1024
/** boost storagemarket/lp2pimpl/net.go providerReadDeadline: 10 s to read a request. */
const READ_DEADLINE_MS = 10_000

export async function createProviderHost(o: {
  identitySeed: Uint8Array
  transport: ProviderTransport
  listenHost: string
  /** 0 (default): any free port. */
  listenPort?: number
  /** Caps and deadlines of its listener (provider-host-limits.ts); the deployed software's by default. */
  limits?: Partial<ProviderHostLimits>
  /** Where refused and cut connections are told, a few lines a minute at most. */
  logger?: Pick<Logger, 'warn'>
}): Promise<Libp2p> {
  const privateKey = await generateKeyPairFromSeed('Ed25519', o.identitySeed)
  const tcpAddress = `/ip4/${o.listenHost}/tcp/${o.listenPort ?? 0}`
  const limits = { ...DEFAULT_PROVIDER_HOST_LIMITS, ...o.limits }
  return createLibp2p({
    privateKey,
    addresses: { listen: [o.transport === 'ws' ? `${tcpAddress}/ws` : tcpAddress] },
    // TCP: Node closes a socket past the cap as soon as it is accepted; the connection manager's
    // limits and deadline hold from accept. WebSocket: they hold once the HTTP upgrade is done, the guard before.
    transports: [o.transport === 'ws' ? guardWebSockets(webSockets(), limits, o.logger) : tcp({ maxConnections: limits.maxSockets })],
    connectionManager: connectionManagerLimits(limits),
    connectionEncrypters: [noise()],
    streamMuxers: [yamux(), mplex()],
  })
}

/** Reads exactly one CBOR value off a stream; anything malformed or oversized is a ProviderWireError. */
export async function readOneMessage(stream: Stream, signal: AbortSignal): Promise<unknown> {
  const onAbort = () => stream.abort(new ProviderWireError('read deadline passed'))
  if (signal.aborted) onAbort()
  signal.addEventListener('abort', onAbort, { once: true })
  let buffered = new Uint8Array(0)
  try {
    for await (const chunk of stream) {
      const next = new Uint8Array(buffered.length + chunk.byteLength)
      next.set(buffered, 0)
      next.set(chunk.subarray(), buffered.length)
      buffered = next
      if (buffered.length > MAX_MESSAGE_BYTES) throw new ProviderWireError('message too large')
      const one = decodeOne(buffered)
      if (one) return one.value
    }
  } finally {
    signal.removeEventListener('abort', onAbort)
  }
  throw new ProviderWireError(buffered.length === 0 ? 'stream closed before a message' : 'truncated message')
}

/** Writes one message, waiting while the stream's send buffer is full. */
async function writeOne(stream: Stream, message: Uint8Array): Promise<void> {
  if (!stream.send(message)) await stream.onDrain()
}

/** A stream fault stands for the provider's own trouble (its handler erred, it is overloaded), the stream for a broken connection. */
class StreamFault extends Error {
  override name = 'StreamFault'
}

/**
 * Serves a request/answer protocol. As the Go handlers do, a request that
 * does not decode gets no answer: the stream is just closed. With `faults`,
 * some streams are answered late, and some reset once the request was
 * handled, its answer lost (boost lp2pimpl/net.go handleNewDealStream writes
 * its answer after the deal was taken: a write that fails leaves a deal the
 * client never heard of).
 */
export async function handleRequests(
  node: Libp2p,
  protocol: string,
  answer: (message: unknown) => Promise<Uint8Array>,
  faults: FaultPlan = noFaults,
): Promise<void> {
  await node.handle(protocol, async (stream) => {
    try {
      const message = await readOneMessage(stream, AbortSignal.timeout(READ_DEADLINE_MS))
      const fault = faults.draw('stream', protocol)
      if (fault?.kind === 'stall') await stall(fault.ms)
      const reply = await answer(message)
      if (fault?.kind === 'fail') throw new StreamFault('stream reset before the answer (simulated fault)')
      await writeOne(stream, reply)
      await stream.close()
    } catch (err) {
      stream.abort(err instanceof Error ? err : new Error(String(err)))
    }
  })
}

/** Serves a protocol that answers without a request (the transports query); faults as `handleRequests`. */
export async function handleQuery(node: Libp2p, protocol: string, answer: () => Uint8Array, faults: FaultPlan = noFaults): Promise<void> {
  await node.handle(protocol, async (stream) => {
    try {
      const fault = faults.draw('stream', protocol)
      if (fault?.kind === 'stall') await stall(fault.ms)
      if (fault?.kind === 'fail') throw new StreamFault('stream reset before the answer (simulated fault)')
      await writeOne(stream, answer())
      await stream.close()
    } catch (err) {
      stream.abort(err instanceof Error ? err : new Error(String(err)))
    }
  })
}

/** A client's side of one exchange (for tests driving a provider by hand): send one message, read one. */
export async function exchange(
  node: Libp2p,
  target: Parameters<Libp2p['dialProtocol']>[0],
  protocol: string,
  message: Uint8Array | null,
  signal: AbortSignal,
): Promise<unknown> {
  const stream = await node.dialProtocol(target, protocol, { signal })
  try {
    if (message) await writeOne(stream, message)
    await stream.close({ signal })
    return await readOneMessage(stream, signal)
  } finally {
    await stream.close().catch(() => stream.abort(new Error('closed')))
  }
}

/** A host with no listener, dialling both TCP and WebSocket (for tests). */
export async function createDialer(): Promise<Libp2p> {
  return createLibp2p({ transports: [tcp(), webSockets()], connectionEncrypters: [noise()], streamMuxers: [yamux(), mplex()] })
}
