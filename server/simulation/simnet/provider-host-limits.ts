import type { IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import type { Listener, Transport } from '@libp2p/interface'
import { openFileLimit } from '../../shared/connection-cap.ts'
import { createLineLimit, leftOutField } from '../../shared/line-limit.ts'
import type { Logger } from '../../shared/logger.ts'

/**
 * How many connections a simulated provider's libp2p host holds, and how long
 * one may take to become a libp2p connection, so that a local flood of its
 * port costs a bounded number of the network process's descriptors and each
 * only for a while (issue 39 item 2).
 */
export interface ProviderHostLimits {
  /** libp2p connections kept at once; past it an inbound one is refused. */
  maxConnections: number
  /** Connections still in their handshake (noise, muxer); past it a new one is closed at once. */
  maxPendingConnections: number
  /** Sockets the listener holds at once, handshaken or not; past it a new one is closed at once. */
  maxSockets: number
  /** From accept (TCP) or from the WebSocket upgrade (WebSocket) to a libp2p connection; then the socket is cut. */
  handshakeTimeoutMs: number
  /** WebSocket only: from accept to the HTTP upgrade request; then the socket is cut. */
  upgradeRequestTimeoutMs: number
}

// boost node/config/def.go: ConnMgrHigh 180, the connection manager's high water mark. Curio's libp2p host
// (curio market/libp2p/libp2p.go) runs go-libp2p's NullConnMgr and NullResourceManager, so no number of
// its own: both kinds get Boost's, on the same go-libp2p stack.
const MAX_CONNECTIONS = 180
// go-libp2p p2p/host/resource-manager/limit_defaults.go (v0.48, Boost's go.mod): the transient scope, where
// a connection stays until its handshake is done, takes 32 inbound connections at its base.
const MAX_PENDING = 32

/**
 * A provider host's limits by default, from what the deployed software
 * configures. The socket cap is what the kept and the handshaking connections
 * add up to: more sockets than that are never any use to the host. Boost's
 * resource manager would allow 512 (boost node/modules/rcmgr.go raises
 * System.ConnsInbound to the next power of two above twice ConnMgrHigh), but
 * some 20 simulated providers share one process: see `limitsForHosts`.
 */
export const DEFAULT_PROVIDER_HOST_LIMITS: ProviderHostLimits = {
  maxConnections: MAX_CONNECTIONS,
  maxPendingConnections: MAX_PENDING,
  maxSockets: MAX_CONNECTIONS + MAX_PENDING,
  // go-libp2p p2p/net/upgrader/upgrader.go: defaultAcceptTimeout, 15 s from accept to a secured, multiplexed connection.
  handshakeTimeoutMs: 15_000,
  // curio deps/config/types.go: ReadHeaderTimeout 5 s on the HTTP server (cuhttp) that takes Curio's WebSocket upgrades.
  upgradeRequestTimeoutMs: 5_000,
}

/** Below this, a host could not serve a client beside a few strangers' half-open sockets. */
const MIN_SOCKETS = 8

/**
 * The limits of `count` provider hosts in one process: together they hold at
 * most a quarter of its open files (its HTTP servers' budget takes half,
 * connection-cap.ts, the rest is for its files and databases), each at most
 * the default. With 20 000 open files, 20 hosts keep 212 sockets each; with
 * a soft limit of 1 024, 12.
 */
export function limitsForHosts(count: number, openFiles = openFileLimit()): Partial<ProviderHostLimits> {
  if (openFiles === undefined || count <= 0) return {}
  const share = Math.max(MIN_SOCKETS, Math.floor(openFiles / 4 / count))
  return share >= DEFAULT_PROVIDER_HOST_LIMITS.maxSockets ? {} : { maxSockets: share }
}

/**
 * The connection manager's part of the limits. go-libp2p never rate-limits
 * loopback (p2p/host/resource-manager/conn_rate_limiter.go); js-libp2p's
 * allow list would lift the caps along with the rate, so the per-address
 * rate is set where it never binds before the caps do: every peer of the
 * simulated network is on loopback, the gateway among them.
 */
export function connectionManagerLimits(l: ProviderHostLimits) {
  return {
    maxConnections: l.maxConnections,
    maxIncomingPendingConnections: l.maxPendingConnections,
    inboundUpgradeTimeout: l.handshakeTimeoutMs,
    inboundConnectionThreshold: l.maxSockets,
  }
}

type LimitLogger = Pick<Logger, 'warn'>

/** Lines about refused or cut sockets, for every host on one logger: a flood writes the first few, then a count. */
const linesOf = new WeakMap<LimitLogger, ReturnType<typeof createLineLimit>>()
function socketLines(logger: LimitLogger) {
  let lines = linesOf.get(logger)
  if (!lines) linesOf.set(logger, (lines = createLineLimit({ perWindow: 5 })))
  return lines
}

/** The parts of @libp2p/websockets' listener (WebSocketListener) the guard wraps; both are public methods of that class. */
interface WebSocketListenerHooks {
  onSocketConnection(socket: Socket): Promise<void>
  onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void
}

/**
 * @libp2p/websockets hands a socket to libp2p's upgrader only once its HTTP
 * upgrade is done; before that, a socket that sends nothing is held with no
 * deadline and no cap (it waits for its first byte forever). This puts each
 * listener's sockets under `maxSockets` and `upgradeRequestTimeoutMs`; after
 * the upgrade, the connection manager's limits take over.
 */
export function guardWebSockets<C>(factory: (components: C) => Transport, limits: ProviderHostLimits, logger?: LimitLogger) {
  return (components: C): Transport => {
    const transport = factory(components)
    const createListener = transport.createListener.bind(transport)
    transport.createListener = (options) => guardListener(createListener(options), limits, logger)
    return transport
  }
}

function guardListener(listener: Listener, limits: ProviderHostLimits, logger?: LimitLogger): Listener {
  const hooks = listener as Listener & Partial<WebSocketListenerHooks>
  const accept = hooks.onSocketConnection?.bind(listener)
  const upgrade = hooks.onUpgrade?.bind(listener)
  // A newer @libp2p/websockets without these would leave the port uncapped: fail at start, not under a flood.
  if (!accept || !upgrade) throw new Error('@libp2p/websockets listener has no onSocketConnection/onUpgrade: cannot cap its sockets')
  const held = new Set<Socket>()
  const upgraded = new WeakSet<object>()
  const lines = logger && socketLines(logger)
  const report = (kind: 'refused' | 'cut', socket: Socket, message: string) =>
    lines?.(kind, (leftOut) =>
      logger?.warn({ remote: socket.remoteAddress, held: held.size, maxSockets: limits.maxSockets, ...leftOutField(leftOut) }, message),
    )

  hooks.onSocketConnection = (socket: Socket) => {
    // No listener of libp2p's is on the socket yet: a reset now would be an uncaught error.
    socket.on('error', () => undefined)
    if (held.size >= limits.maxSockets) {
      report('refused', socket, 'simulated provider host: socket cap reached, new connections closed')
      socket.destroy()
      return Promise.resolve()
    }
    held.add(socket)
    const deadline = setTimeout(() => {
      if (upgraded.has(socket)) return
      report('cut', socket, 'simulated provider host: connection cut, no WebSocket upgrade before the deadline')
      // With an error: the listener may be waiting for the socket's first byte, and only an error ends that wait.
      socket.destroy(new Error('no WebSocket upgrade before the deadline'))
    }, limits.upgradeRequestTimeoutMs)
    deadline.unref()
    socket.once('close', () => {
      clearTimeout(deadline)
      held.delete(socket)
    })
    return accept(socket)
  }
  hooks.onUpgrade = (req, socket, head) => {
    upgraded.add(socket)
    upgrade(req, socket, head)
  }
  // The listener closes only the sockets that sent a byte; its server would wait for the others forever.
  const close = listener.close.bind(listener)
  listener.close = () => {
    const closed = close()
    for (const socket of held) socket.destroy()
    return closed
  }
  return listener
}
