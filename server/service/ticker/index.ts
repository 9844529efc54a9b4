import type { Logger } from '../../shared/logger.ts'
import { EXCHANGES, type ExchangeAdapter, type PairQuote } from './exchanges.ts'

/** Only data fetched successfully within this long is shown (spec). */
export const FRESHNESS_MS = 2 * 60 * 1000

export interface TickerEntry {
  exchange: string
  fetchedAt: number
  data: Record<string, PairQuote>
}

export interface PairTickers {
  pair: string
  tickers: { exchange: string; data: PairQuote; fetchedAt: number }[]
  weightedPrice: number
}

export interface Ticker {
  /** Fetches every exchange once (in parallel); failures keep the last success. */
  pollOnce(): Promise<void>
  start(intervalMs: number): void
  stop(): Promise<void>
  latest(): TickerEntry[]
  byPair(pair: string): PairTickers
}

export interface TickerOptions {
  now: () => number
  logger: Logger
  adapters?: readonly ExchangeAdapter[]
  /** Per exchange name; tests point them at loopback. */
  baseUrls?: Record<string, string>
  timeoutMs?: number
  fetch?: typeof fetch
}

export function createTicker(options: TickerOptions): Ticker {
  const adapters = options.adapters ?? EXCHANGES
  const doFetch = options.fetch ?? fetch
  const timeoutMs = options.timeoutMs ?? 10_000
  const last = new Map<string, TickerEntry>()
  /** Exchanges whose last poll failed: a warning when one starts failing, a line when it is back, nothing in between. */
  const failing = new Set<string>()
  let timer: NodeJS.Timeout | undefined
  let inFlight: Promise<void> | undefined
  const abort = new AbortController()

  const getJson = async (url: string): Promise<unknown> => {
    const res = await doFetch(url, {
      headers: { accept: 'application/json' },
      signal: AbortSignal.any([abort.signal, AbortSignal.timeout(timeoutMs)]),
    })
    if (!res.ok) throw new Error(`HTTP ${res.status} from ${new URL(url).host}`)
    return res.json()
  }

  // One line per round at most, whatever the number of exchanges: an offline machine gets one warning that says what it means.
  const pollOnce = async () => {
    const newlyFailing: Record<string, string> = {}
    const back: string[] = []
    await Promise.all(
      adapters.map(async (a) => {
        try {
          const data = await a.fetchPairs(getJson, options.baseUrls?.[a.name] ?? a.defaultBaseUrl)
          last.set(a.name, { exchange: a.name, fetchedAt: options.now(), data })
          if (failing.delete(a.name)) back.push(a.name)
        } catch (err) {
          if (abort.signal.aborted) return
          const message = (err as Error).message
          if (failing.has(a.name))
            options.logger.debug({ exchange: a.name, err: message }, 'ticker fetch failed again; keeping the last success')
          else {
            failing.add(a.name)
            newlyFailing[a.name] = message
          }
        }
      }),
    )
    const names = Object.keys(newlyFailing).sort()
    if (names.length === adapters.length) {
      options.logger.warn(
        { errors: newlyFailing },
        'ticker: no exchange answers (is this machine offline?); the public ticker has no prices until one does, and nothing else depends on it',
      )
    } else if (names.length > 0) {
      options.logger.warn(
        { errors: newlyFailing },
        `ticker: ${names.join(', ')} ${names.length === 1 ? 'does' : 'do'} not answer; prices come from the other exchanges until ${names.length === 1 ? 'it answers' : 'they answer'} again`,
      )
    }
    if (back.length > 0)
      options.logger.info({ exchanges: back.sort() }, `ticker: ${back.join(', ')} ${back.length === 1 ? 'answers' : 'answer'} again`)
  }

  const fresh = () => {
    const cutoff = options.now() - FRESHNESS_MS
    return [...last.values()].filter((e) => e.fetchedAt >= cutoff).sort((a, b) => a.exchange.localeCompare(b.exchange))
  }

  return {
    pollOnce: () => (inFlight ??= pollOnce().finally(() => (inFlight = undefined))),
    start(intervalMs) {
      const tick = () => {
        void (inFlight ??= pollOnce().finally(() => (inFlight = undefined)))
      }
      tick()
      timer = setInterval(tick, intervalMs)
      timer.unref()
    },
    async stop() {
      clearInterval(timer)
      abort.abort()
      await inFlight
    },
    latest: () => fresh().map((e) => ({ exchange: e.exchange, fetchedAt: e.fetchedAt, data: e.data })),
    byPair(pair) {
      const tickers = fresh()
        .filter((e) => e.data[pair])
        .map((e) => ({ exchange: e.exchange, data: e.data[pair], fetchedAt: e.fetchedAt }))
      const volume = tickers.reduce((s, t) => s + t.data.volume, 0)
      const weightedPrice = volume > 0 ? tickers.reduce((s, t) => s + t.data.price * t.data.volume, 0) / volume : 0
      return { pair, tickers, weightedPrice }
    },
  }
}
