import { noise } from '@chainsafe/libp2p-noise'
import { yamux } from '@chainsafe/libp2p-yamux'
import { generateKeyPairFromSeed } from '@libp2p/crypto/keys'
import { UnsupportedProtocolError, type Stream } from '@libp2p/interface'
import { mplex } from '@libp2p/mplex'
import { tcp } from '@libp2p/tcp'
import { webSockets } from '@libp2p/websockets'
import * as dagCbor from '@ipld/dag-cbor'
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr'
import { decodeFirst } from 'cborg'
import { createLibp2p, type Libp2p } from 'libp2p'
import { NetworkError, protocolError, timedOut } from '../errors.ts'

/**
 * libp2p as Boost and Curio speak it: TCP (Boost) or WebSocket (Curio, whose
 * market host listens on /ws behind its HTTPS proxy and publishes only
 * /dns/<domain>/tcp/443/wss: curio market/libp2p/libp2p.go), noise, yamux or mplex; one CBOR
 * message each way per stream (go-cbor-util's WriteCborRPC/ReadCborRPC, no
 * length prefix), the answering side closing the stream after its reply.
 */

/** A message is a few kilobytes; a peer sending more is not speaking the protocol. */
const MAX_MESSAGE_BYTES = 1024 * 1024
const SERVE_READ_TIMEOUT_MS = 30_000

export type { Libp2p }

/**
 * A libp2p node; `identitySeed` (32 bytes) gives it a stable Ed25519 peer id, else a new one.
 * `/dns`, `/dns4` and `/dns6` addresses (Boost's devnet publishes /dns/boost/tcp/50000, Curio
 * /dns/<domain>/…) are handed to the TCP and WebSocket transports by name, which dial through
 * Node's net (getaddrinfo: the hosts file, docker's resolver); libp2p's own resolver, which
 * queries DNS servers directly, only expands /dnsaddr.
 */
export async function createHost(options: { identitySeed?: Uint8Array; listen?: string[] } = {}): Promise<Libp2p> {
  const privateKey = options.identitySeed && (await generateKeyPairFromSeed('Ed25519', options.identitySeed))
  return createLibp2p({
    ...(privateKey ? { privateKey } : {}),
    addresses: { listen: options.listen ?? [] },
    transports: [tcp(), webSockets()],
    connectionEncrypters: [noise()],
    streamMuxers: [yamux(), mplex()],
  })
}

/** A provider as the chain publishes it (StateMinerInfo's PeerId and Multiaddrs). */
export interface PeerAddress {
  peerId: string
  multiaddrs: string[]
}

/**
 * Opens a stream to the peer on the first of `protocols` it speaks, sends `message`, reads its one reply.
 * Fails with a NetworkError: UNREACHABLE (no connection), REFUSED (it speaks none of `protocols`),
 * TIMED_OUT (`signal`), or PROTOCOL_ERROR with `unanswered` once the message was sent and no
 * answer came back (a reset stream, a closed one, garbage).
 */
export async function request(
  node: Libp2p,
  peer: PeerAddress,
  protocols: readonly string[],
  message: Uint8Array,
  signal: AbortSignal,
): Promise<{ protocol: string; reply: unknown }> {
  const targets: Multiaddr[] = peer.multiaddrs.map((a) => {
    const m = multiaddr(a)
    return m.getComponents().some((c) => c.name === 'p2p') ? m : m.encapsulate(`/p2p/${peer.peerId}`)
  })
  if (targets.length === 0) throw new NetworkError('UNREACHABLE', `provider peer ${peer.peerId} publishes no address`)
  let stream: Stream
  try {
    stream = await node.dialProtocol(targets, [...protocols], { signal })
  } catch (err) {
    throw dialFailure(err, protocols, signal)
  }
  try {
    // Sent whole, then our side closed for writing, as go-cbor-util's callers do.
    try {
      await send(stream, message)
      await stream.close({ signal })
    } catch (err) {
      if (signal.aborted) throw timedOut(`no room to send to ${peer.peerId} in time`, err)
      throw new NetworkError('UNREACHABLE', `the stream to ${peer.peerId} broke while sending: ${messageOf(err)}`, { cause: err })
    }
    try {
      return { protocol: stream.protocol, reply: await readMessage(stream, signal) }
    } catch (err) {
      // Sent, then no answer: the peer may have acted on it (Boost takes a deal before it writes its answer).
      if (signal.aborted) throw timedOut(`${peer.peerId} did not answer in time`, err)
      throw new NetworkError('PROTOCOL_ERROR', `the peer did not answer: ${messageOf(err)}`, { cause: err, unanswered: true })
    }
  } finally {
    await stream.close().catch(() => stream.abort(new Error('closed')))
  }
}

/**
 * What a failed dial means. The one place libp2p's own errors are read: multistream-select's
 * "na" (UnsupportedProtocolError) is the provider refusing the protocol; anything else, no connection.
 */
function dialFailure(err: unknown, protocols: readonly string[], signal: AbortSignal): NetworkError {
  if (signal.aborted) return timedOut(`dialing timed out: ${messageOf(err)}`, err)
  if (err instanceof UnsupportedProtocolError) {
    return new NetworkError('REFUSED', `the provider speaks none of ${protocols.join(', ')}`, {
      cause: err,
      providerReason: `protocol not supported: ${protocols.join(', ')}`,
    })
  }
  return new NetworkError('UNREACHABLE', `could not reach the provider: ${messageOf(err)}`, { cause: err })
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err))

/** Serves `protocol`: reads one message, answers with what `answer` returns, closes the stream. */
export async function serve(node: Libp2p, protocol: string, answer: (message: unknown) => Promise<Uint8Array | null>): Promise<void> {
  await node.handle(protocol, async (stream) => {
    const signal = AbortSignal.timeout(SERVE_READ_TIMEOUT_MS)
    try {
      const reply = await answer(await readMessage(stream, signal))
      if (reply) await send(stream, reply)
      await stream.close()
    } catch (err) {
      stream.abort(err instanceof Error ? err : new Error(String(err)))
    }
  })
}

/** Writes one message, waiting for the stream's buffer to drain when it is full. */
async function send(stream: Stream, message: Uint8Array): Promise<void> {
  if (!stream.send(message)) await stream.onDrain()
}

/** Reads until the stream holds one whole CBOR value (DAG-CBOR, tag 42 as CIDs). */
export async function readMessage(stream: Stream, signal: AbortSignal): Promise<unknown> {
  const onAbort = () => stream.abort(signal.reason instanceof Error ? signal.reason : new Error('aborted'))
  if (signal.aborted) onAbort()
  signal.addEventListener('abort', onAbort, { once: true })
  let buffered = new Uint8Array(0)
  try {
    for await (const chunk of stream) {
      const next = new Uint8Array(buffered.length + chunk.byteLength)
      next.set(buffered, 0)
      next.set(chunk.subarray(), buffered.length)
      buffered = next
      if (buffered.length > MAX_MESSAGE_BYTES) throw protocolError('message too large')
      const decoded = tryDecode(buffered)
      if (decoded !== INCOMPLETE) return decoded
    }
  } finally {
    signal.removeEventListener('abort', onAbort)
  }
  if (signal.aborted) throw signal.reason
  throw protocolError(buffered.length === 0 ? 'the peer closed the stream without answering' : 'the peer sent a truncated message')
}

const INCOMPLETE = Symbol('incomplete')

function tryDecode(bytes: Uint8Array): unknown {
  try {
    return decodeFirst(bytes, dagCbor.decodeOptions)[0]
  } catch (err) {
    if (err instanceof Error && /unexpected end|not enough data/i.test(err.message)) return INCOMPLETE
    throw protocolError(`not CBOR: ${err instanceof Error ? err.message : String(err)}`)
  }
}
