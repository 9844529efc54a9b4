import { seededRandom } from './random.ts'

/**
 * Seeded faults of the simulated network: a small share of chain calls,
 * provider streams and CAR transfers fail or stall, as on a real network
 * under load. The same seed and the same sequence of events give the same
 * faults, so a failing run can be replayed.
 */

/** Where a fault can strike: a Lotus JSON-RPC call, a provider's libp2p stream, a provider's HTTP download of a CAR. */
export type FaultSite = 'chain' | 'stream' | 'transfer'
export const FAULT_SITES: readonly FaultSite[] = ['chain', 'stream', 'transfer']

/**
 * How a failed chain call fails, each as a node or the proxy before it answers one (rpc-faults.ts):
 * `rate-limited` a 429, `busy` a "server busy" JSON-RPC error, `unavailable` a proxy's 503, `bad-gateway`
 * a proxy's 502, `timeout` no answer until the client gives up, `unknown` some other error of the node.
 */
export type ChainFailure = 'rate-limited' | 'busy' | 'unavailable' | 'bad-gateway' | 'timeout' | 'unknown'
export const CHAIN_FAILURES: readonly ChainFailure[] = ['rate-limited', 'busy', 'unavailable', 'bad-gateway', 'timeout', 'unknown']

/**
 * `fail`: the call errors (a chain call as `as`), the stream is reset, the download is cut; `stall`: it
 * answers, late (by `ms`).
 */
export type Fault = { kind: 'fail'; as?: ChainFailure } | { kind: 'stall'; ms: number }

export type FaultCounts = Record<FaultSite, { fail: number; stall: number }>

export interface FaultPlan {
  /** Share of events that get a fault, per site (0 = none). */
  readonly rate: number
  /**
   * Decides the next event at `site` (`label` names it in the log: a method, a protocol, a URL).
   * The n-th draw at a site is the same under a seed, whatever the label.
   */
  draw(site: FaultSite, label?: string): Fault | null
  /** How many faults struck, by site and kind, so a test can tell faults really happened. */
  counts(): FaultCounts
}

/** A fault plan as the simulated network's chain also reads it: how its calls fail, and a failure held for a while. */
export interface ChainFaultPlan extends FaultPlan {
  /** How many chain calls failed, by how they failed. */
  chainFailures(): Record<ChainFailure, number>
  /** How long a chain call struck by a `timeout` is held before the proxy gives up on it (a 504). */
  readonly hangMs: number
  /**
   * Until released (null), every chain call to one of `methods` (any, when unset) fails as `failure`,
   * whatever the rate: a node rate-limiting its client for a while, as a test or a demo wants it.
   */
  holdChain(failure: ChainFailure | null, methods?: readonly string[]): void
}

export interface FaultOptions {
  seed: string
  /** 0 to 0.2 (SIMNET_FAULT_RATE). */
  rate: number
  /** Longest stall (default 3 s); a stall lasts between half of it and all of it, never forever. */
  maxStallMs?: number
  /** How long a chain call struck by a `timeout` is held unanswered (default 60 s, nginx's proxy_read_timeout). */
  hangMs?: number
  /** Told each fault as it strikes (e.g. a debug log line). */
  onFault?: (site: FaultSite, fault: Fault, label: string | undefined) => void
}

export const MAX_FAULT_RATE = 0.2

export class FaultPlanError extends Error {
  override name = 'FaultPlanError'
  readonly code = 'FAULT_PLAN_INVALID'
}

/**
 * A fault plan. `createFaults({ seed: 'x', rate: 0.03 })` strikes about 3 %
 * of the events at each site, half of them failures, half stalls.
 */
export function createFaults(o: FaultOptions): ChainFaultPlan {
  if (!(o.rate >= 0 && o.rate <= MAX_FAULT_RATE)) throw new FaultPlanError(`a fault rate is between 0 and ${MAX_FAULT_RATE}, not ${o.rate}`)
  const maxStallMs = o.maxStallMs ?? 3000
  if (!(maxStallMs >= 0 && Number.isFinite(maxStallMs))) throw new FaultPlanError(`a stall is bounded: ${maxStallMs} ms is not`)
  const random = seededRandom(`faults/${o.seed}`)
  const drawn: Record<FaultSite, number> = { chain: 0, stream: 0, transfer: 0 }
  const counts: FaultCounts = { chain: { fail: 0, stall: 0 }, stream: { fail: 0, stall: 0 }, transfer: { fail: 0, stall: 0 } }
  const chainFailures = Object.fromEntries(CHAIN_FAILURES.map((f) => [f, 0])) as Record<ChainFailure, number>
  let held: { failure: ChainFailure; methods?: readonly string[] } | null = null
  const strike = (site: FaultSite, fault: Fault, label: string | undefined) => {
    counts[site][fault.kind]++
    if (fault.kind === 'fail' && fault.as) chainFailures[fault.as]++
    o.onFault?.(site, fault, label)
    return fault
  }
  return {
    rate: o.rate,
    hangMs: o.hangMs ?? 60_000,
    draw(site, label) {
      if (site === 'chain' && held && (!held.methods || (label !== undefined && held.methods.includes(label))))
        return strike(site, { kind: 'fail', as: held.failure }, label)
      if (o.rate === 0) return null
      const n = drawn[site]++
      const r = random(site, n)
      if (r >= o.rate) return null
      // Where under the rate it fell decides the kind: the lower half fails, the upper half stalls.
      if (r >= o.rate / 2) return strike(site, { kind: 'stall', ms: Math.round(maxStallMs * (0.5 + random(site, n, 'stall') / 2)) }, label)
      if (site !== 'chain') return strike(site, { kind: 'fail' }, label)
      // A chain call fails in one of the ways a node under load, or the proxy before it, fails one.
      return strike(site, { kind: 'fail', as: CHAIN_FAILURES[Math.floor(random(site, n, 'failure') * CHAIN_FAILURES.length)] }, label)
    },
    counts: () => structuredClone(counts),
    chainFailures: () => ({ ...chainFailures }),
    holdChain(failure, methods) {
      held = failure ? { failure, methods } : null
    },
  }
}

/** A plan that never strikes: the simulated network without faults. */
export const noFaults: FaultPlan = createFaults({ seed: 'none', rate: 0 })

/** Waits `ms`, or less if `signal` aborts (then rejects with its reason). */
export function stall(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const timer = setTimeout(resolve, ms)
    signal?.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true })
  })
}

/**
 * A provider's downloader `fetch` with transfer faults: a drawn `fail` cuts
 * the response body part-way (the connection broke), a `stall` pauses it
 * part-way. The downloader's own retry and resume then apply.
 */
export function faultyFetch(inner: typeof fetch, faults: FaultPlan): typeof fetch {
  if (faults.rate === 0) return inner
  return (async (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
    const res = await inner(input, init)
    // A HEAD has no body to cut; its answer counts like any other request though, so draw only for bodies.
    if (!res.body || init?.method === 'HEAD') return res
    const fault = faults.draw('transfer', String(input))
    if (!fault) return res
    const length = Number(res.headers.get('content-length') ?? 0)
    // Cut or pause after about half of what was asked for (at least one byte passes).
    const at = Math.max(1, Math.floor(length / 2))
    const reader = res.body.getReader()
    let passed = 0
    let struck = false
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { done, value } = await reader.read()
        if (done) return controller.close()
        if (!struck && passed + value.length >= at) {
          struck = true
          const head = value.subarray(0, Math.max(0, at - passed))
          if (head.length > 0) controller.enqueue(head)
          passed += head.length
          if (fault.kind === 'fail') {
            await reader.cancel().catch(() => {})
            return controller.error(new TypeError('terminated: the connection was cut (simulated fault)'))
          }
          try {
            await stall(fault.ms, init?.signal ?? undefined)
          } catch (err) {
            await reader.cancel().catch(() => {})
            return controller.error(err)
          }
          const tail = value.subarray(head.length)
          if (tail.length > 0) controller.enqueue(tail)
          passed += tail.length
          return
        }
        passed += value.length
        controller.enqueue(value)
      },
      cancel: (reason) => reader.cancel(reason),
    })
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers })
  }) as typeof fetch
}
