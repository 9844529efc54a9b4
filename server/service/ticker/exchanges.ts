/**
 * Adapters for public exchange ticker APIs, each turning one exchange's
 * response shape into `{ <BASE>_<QUOTE>: { price, volume } }` (24 h volume in
 * the base currency, so volumes weigh alike across exchanges).
 */
export interface PairQuote {
  price: number
  volume: number
}

export type GetJson = (url: string) => Promise<unknown>

export interface ExchangeAdapter {
  name: string
  defaultBaseUrl: string
  /** Fetches every pair it can; throws when the exchange gave nothing usable. */
  fetchPairs(getJson: GetJson, baseUrl: string): Promise<Record<string, PairQuote>>
}

/** A positive finite price and a non-negative volume, or nothing: prices are never made up. */
function quote(price: unknown, volume: unknown): PairQuote | undefined {
  const p = typeof price === 'string' ? Number(price) : price
  const v = typeof volume === 'string' ? Number(volume) : volume
  if (typeof p !== 'number' || typeof v !== 'number' || !Number.isFinite(p) || !Number.isFinite(v) || p <= 0 || v < 0) return undefined
  return { price: p, volume: v }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

function nonEmpty(name: string, pairs: Record<string, PairQuote>): Record<string, PairQuote> {
  if (Object.keys(pairs).length === 0) throw new Error(`${name}: no usable ticker in the response`)
  return pairs
}

/** Kraken `GET /0/public/Ticker?pair=FILUSD,FILEUR`: `{ error: [], result: { FILUSD: { c: [last, lot], v: [today, 24h] } } }`. */
export const kraken: ExchangeAdapter = {
  name: 'kraken',
  defaultBaseUrl: 'https://api.kraken.com',
  async fetchPairs(getJson, baseUrl) {
    const body = await getJson(`${baseUrl}/0/public/Ticker?pair=FILUSD,FILEUR`)
    if (!isObject(body) || !isObject(body.result)) throw new Error('kraken: unexpected response')
    if (Array.isArray(body.error) && body.error.length > 0) throw new Error(`kraken: ${String(body.error[0])}`)
    const out: Record<string, PairQuote> = {}
    for (const [key, pair] of [
      ['FILUSD', 'FIL_USD'],
      ['FILEUR', 'FIL_EUR'],
    ] as const) {
      const t = body.result[key]
      if (!isObject(t) || !Array.isArray(t.c) || !Array.isArray(t.v)) continue
      const q = quote(t.c[0], t.v[1])
      if (q) out[pair] = q
    }
    return nonEmpty('kraken', out)
  },
}

/** Bitfinex `GET /v2/tickers?symbols=tFILUSD`: `[[SYMBOL, BID, BID_SIZE, ASK, ASK_SIZE, CHANGE, CHANGE_REL, LAST, VOLUME, HIGH, LOW]]`. */
export const bitfinex: ExchangeAdapter = {
  name: 'bitfinex',
  defaultBaseUrl: 'https://api-pub.bitfinex.com',
  async fetchPairs(getJson, baseUrl) {
    const body = await getJson(`${baseUrl}/v2/tickers?symbols=tFILUSD`)
    if (!Array.isArray(body)) throw new Error('bitfinex: unexpected response')
    const out: Record<string, PairQuote> = {}
    for (const row of body) {
      if (!Array.isArray(row) || row[0] !== 'tFILUSD') continue
      const q = quote(row[7], row[8])
      if (q) out.FIL_USD = q
    }
    return nonEmpty('bitfinex', out)
  },
}

/** Gemini `GET /v1/pubticker/filusd`: `{ bid, ask, last, volume: { FIL, USD, timestamp } }`. */
export const gemini: ExchangeAdapter = {
  name: 'gemini',
  defaultBaseUrl: 'https://api.gemini.com',
  async fetchPairs(getJson, baseUrl) {
    const body = await getJson(`${baseUrl}/v1/pubticker/filusd`)
    if (!isObject(body) || !isObject(body.volume)) throw new Error('gemini: unexpected response')
    const q = quote(body.last, body.volume.FIL)
    return nonEmpty('gemini', q ? { FIL_USD: q } : {})
  },
}

/** Coinbase Exchange `GET /products/FIL-USD/ticker`: `{ ask, bid, volume, trade_id, price, size, time }`; one call per pair. */
export const coinbase: ExchangeAdapter = {
  name: 'coinbase',
  defaultBaseUrl: 'https://api.exchange.coinbase.com',
  async fetchPairs(getJson, baseUrl) {
    const out: Record<string, PairQuote> = {}
    for (const [product, pair] of [
      ['FIL-USD', 'FIL_USD'],
      ['FIL-EUR', 'FIL_EUR'],
    ] as const) {
      try {
        const body = await getJson(`${baseUrl}/products/${product}/ticker`)
        const q = isObject(body) ? quote(body.price, body.volume) : undefined
        if (q) out[pair] = q
      } catch {
        // One missing product must not hide the others.
      }
    }
    return nonEmpty('coinbase', out)
  },
}

/** OKX `GET /api/v5/market/ticker?instId=FIL-USDT`: `{ code: "0", msg, data: [{ instId, last, vol24h, volCcy24h, ts }] }`. */
export const okx: ExchangeAdapter = {
  name: 'okx',
  defaultBaseUrl: 'https://www.okx.com',
  async fetchPairs(getJson, baseUrl) {
    const body = await getJson(`${baseUrl}/api/v5/market/ticker?instId=FIL-USDT`)
    if (!isObject(body) || body.code !== '0' || !Array.isArray(body.data)) throw new Error('okx: unexpected response')
    const t = body.data.find((d) => isObject(d) && d.instId === 'FIL-USDT')
    const q = isObject(t) ? quote(t.last, t.vol24h) : undefined
    return nonEmpty('okx', q ? { FIL_USDT: q } : {})
  },
}

export const EXCHANGES: readonly ExchangeAdapter[] = [kraken, bitfinex, gemini, coinbase, okx]
