import { readFileSync } from 'node:fs'
import type { Server } from 'node:http'
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

/** Half the process's open-file limit (the rest for files, databases, peers), or 4 096 where it cannot be read. */
export function defaultMaxConnections(): number {
  try {
    const limits = readFileSync('/proc/self/limits', 'utf8')
    const soft = /^Max open files\s+(\d+)/m.exec(limits)?.[1]
    if (soft) return Math.max(64, Math.floor(Number(soft) / 2))
  } catch {
    // Not Linux: fall through.
  }
  return 4096
}

interface BudgetState extends ConnectionBudget {
  total: number
  perAddress: Map<string, number>
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
    held: () => state.total,
    // One warning when the cap is reached, then at most one a minute with how many were refused meanwhile.
    warn(reason, address) {
      refused++
      const now = Date.now()
      if (now - warnedAt < 60_000) return
      o.logger?.warn({ reason, address, held: state.total, maxConnections: state.maxConnections, maxPerAddress: state.maxPerAddress, refused }, 'connection cap reached: new connections get 503')
      warnedAt = now
      refused = 0
    },
  }
  return state
}

const REFUSAL_LINGER_MS = 250

/**
 * Puts `server`'s connections on `budget`: a connection over the global cap,
 * or over the per-address cap from an address `exempt` does not name (a
 * trusted reverse proxy), never reaches the HTTP parser; it gets a 503 with
 * `Retry-After` and is closed.
 */
export function capConnections(server: Server, budget: ConnectionBudget, opts: { exempt?: (address: string) => boolean; body: (message: string) => { type: string; text: string } }): void {
  const b = budget as BudgetState
  const httpListeners = server.listeners('connection') as ((socket: Socket) => void)[]
  server.removeAllListeners('connection')
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? ''
    const mine = b.perAddress.get(address) ?? 0
    const overAddress = mine >= b.maxPerAddress && !opts.exempt?.(address)
    if (b.total >= b.maxConnections || overAddress) {
      b.warn(overAddress ? 'per-address' : 'total', address)
      // No parser is attached: without a listener, a reset would be an uncaught error.
      socket.on('error', () => undefined)
      closeGently(socket, rawAnswer('503 Service Unavailable', opts.body('Too many connections; try again shortly'), { 'Retry-After': '5' }), REFUSAL_LINGER_MS)
      return
    }
    b.total++
    b.perAddress.set(address, mine + 1)
    socket.once('close', () => {
      b.total--
      const left = (b.perAddress.get(address) ?? 1) - 1
      if (left === 0) b.perAddress.delete(address)
      else b.perAddress.set(address, left)
    })
    for (const listener of httpListeners) listener.call(server, socket)
  })
}
