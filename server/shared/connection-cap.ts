import { readFileSync } from 'node:fs'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { Logger } from './logger.ts'
import { closeGently, rawAnswer } from './lingering-close.ts'

/**
 * Connections one process may hold, shared by every server it runs: file
 * descriptors are the process's, not one server's. Past the cap a new
 * connection is answered 503 and closed at once, before descriptors run out
 * (nginx's `worker_connections`, `limit_conn` for one address).
 */
export interface ConnectionBudget {
  readonly maxConnections: number
  readonly maxPerAddress: number
  /** Connections held now, by every server on this budget. */
  held(): number
}

export interface ConnectionBudgetOptions {
  maxConnections?: number
  maxPerAddress?: number
  logger?: Logger
}

/** This process's soft limit of open files (Linux /proc), or undefined where it cannot be read. */
export function openFileLimit(): number | undefined {
  try {
    const soft = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1]
    return soft ? Number(soft) : undefined
  } catch {
    return undefined
  }
}

/** Half the process's open-file limit (the rest for files, databases, peers), or 4 096 where it cannot be read. */
export function defaultMaxConnections(): number {
  const limit = openFileLimit()
  return limit === undefined ? 4096 : Math.max(64, Math.floor(limit / 2))
}

/** A connection on the budget, and the request it is on, if any. */
interface Held {
  socket: Socket
  address: string
  exempt: boolean
  request?: IncomingMessage
  response?: ServerResponse
  /** When the last request began, or the connection opened. */
  since: number
  bytesAtRequest: number
}

interface BudgetState extends ConnectionBudget {
  total: number
  /** Each address's connections, oldest first. */
  perAddress: Map<string, Set<Held>>
  /** Every connection, oldest first. */
  all: Set<Held>
  evicted: number
  warn(reason: string, address: string): void
}

export function createConnectionBudget(o: ConnectionBudgetOptions = {}): ConnectionBudget {
  let warnedAt = 0
  let refused = 0
  const state: BudgetState = {
    maxConnections: o.maxConnections ?? defaultMaxConnections(),
    maxPerAddress: o.maxPerAddress ?? 256,
    total: 0,
    perAddress: new Map(),
    all: new Set(),
    evicted: 0,
    held: () => state.total,
    // One warning when the cap is reached, then at most one a minute with how many were refused meanwhile.
    warn(reason, address) {
      refused++
      const now = Date.now()
      if (now - warnedAt < 60_000) return
      o.logger?.warn(
        {
          reason,
          address,
          held: state.total,
          maxConnections: state.maxConnections,
          maxPerAddress: state.maxPerAddress,
          refused,
          evicted: state.evicted,
        },
        "connection cap reached: new connections get 503 or take a stalled one's place",
      )
      warnedAt = now
      refused = 0
      state.evicted = 0
    },
  }
  return state
}

const REFUSAL_LINGER_MS = 250

/** A connection whose last request began (or which opened) less than this ago is never judged stalled: it has had no time to show its pace. */
const STALL_GRACE_MS = 2_000
/** Slower than any client really sending a body (a trickle of a byte every few seconds is far below). */
const STALL_BYTES_PER_SECOND = 1_024

/**
 * Idle between requests, or sending its request slower than anyone means to:
 * a connection the server is not working for. One being answered is never stalled.
 */
function stalled(held: Held, now: number): boolean {
  const ms = now - held.since
  if (ms <= STALL_GRACE_MS) return false
  // Idle: no request yet, or the last one answered (read here, not by a listener on every response).
  if (!held.request || held.response?.writableFinished || held.response?.destroyed) return true
  return !held.request.complete && ((held.socket.bytesRead - held.bytesAtRequest) * 1000) / ms < STALL_BYTES_PER_SECOND
}

/**
 * When the global cap is full, a newcomer takes the place of a stalled
 * connection: the oldest of the address that holds the most if it holds more
 * than the newcomer would, else the oldest of all. Strangers holding slow
 * bodies or idle keep-alives from however many addresses cannot keep
 * everyone else out, and a client being served or sending at a real pace is
 * never cut. nginx likewise reclaims idle keep-alive connections when
 * `worker_connections` run out.
 */
function evictForNewcomer(b: BudgetState, newcomerHolds: number): boolean {
  let heaviest: Set<Held> | undefined
  for (const held of b.perAddress.values()) {
    if (held.size > (heaviest?.size ?? newcomerHolds + 1) && !held.values().next().value?.exempt) heaviest = held
  }
  const now = Date.now()
  for (const candidates of heaviest ? [heaviest, b.all] : [b.all]) {
    for (const held of candidates) {
      if (held.exempt || !stalled(held, now)) continue
      b.evicted++
      release(b, held)
      held.socket.destroy()
      return true
    }
  }
  return false
}

/** Takes a connection off the budget; false if it already was. */
function release(b: BudgetState, held: Held): boolean {
  if (!b.all.delete(held)) return false
  b.total--
  const sameAddress = b.perAddress.get(held.address)
  sameAddress?.delete(held)
  if (sameAddress?.size === 0) b.perAddress.delete(held.address)
  return true
}

/**
 * Puts `server`'s connections on `budget`: a connection over the global cap,
 * or over the per-address cap from an address `exempt` does not name (a
 * trusted reverse proxy), never reaches the HTTP parser; it gets a 503 with
 * `Retry-After` and is closed.
 */
export function capConnections(
  server: Server,
  budget: ConnectionBudget,
  opts: { exempt?: (address: string) => boolean; body: (message: string) => { type: string; text: string } },
): void {
  const b = budget as BudgetState
  const onSocket = new WeakMap<Socket, Held>()
  const httpListeners = server.listeners('connection') as ((socket: Socket) => void)[]
  server.removeAllListeners('connection')
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? ''
    const exempt = opts.exempt?.(address) ?? false
    const mine = b.perAddress.get(address)?.size ?? 0
    const overAddress = mine >= b.maxPerAddress && !exempt
    if (overAddress || (b.total >= b.maxConnections && !evictForNewcomer(b, mine))) {
      b.warn(overAddress ? 'per-address' : 'total', address)
      // No parser is attached: without a listener, a reset would be an uncaught error.
      socket.on('error', () => undefined)
      closeGently(
        socket,
        rawAnswer('503 Service Unavailable', opts.body('Too many connections; try again shortly'), { 'Retry-After': '5' }),
        REFUSAL_LINGER_MS,
      )
      return
    }
    const held: Held = { socket, address, exempt, since: Date.now(), bytesAtRequest: 0 }
    onSocket.set(socket, held)
    let sameAddress = b.perAddress.get(address)
    if (!sameAddress) b.perAddress.set(address, (sameAddress = new Set()))
    sameAddress.add(held)
    b.all.add(held)
    b.total++
    // An evicted connection was already taken off when it was chosen.
    socket.once('close', () => release(b, held))
    for (const listener of httpListeners) listener.call(server, socket)
  })
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const held = onSocket.get(request.socket)
    if (!held) return
    held.request = request
    held.response = response
    held.since = Date.now()
    held.bytesAtRequest = request.socket.bytesRead
  })
}
