import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../server/shared/http.ts'
import { EXCHANGES } from '../../server/service/ticker/exchanges.ts'
import { createTicker } from '../../server/service/ticker/index.ts'
import { pino } from 'pino'
import { expectErrorEnvelope, startTestService, T0, type TestService } from './helpers.ts'

/**
 * Recorded response shapes of the exchanges' public ticker APIs, replayed by a
 * loopback server. `broken` names exchanges that answer 503 instead.
 */
const fixture = (name: string) => readFileSync(join(import.meta.dirname, 'fixtures', name), 'utf8')
const ROUTES: Record<string, string> = {
  '/kraken/0/public/Ticker?pair=FILUSD,FILEUR': 'kraken-ticker.json',
  '/bitfinex/v2/tickers?symbols=tFILUSD': 'bitfinex-tickers.json',
  '/gemini/v1/pubticker/filusd': 'gemini-pubticker.json',
  '/coinbase/products/FIL-USD/ticker': 'coinbase-fil-usd.json',
  '/coinbase/products/FIL-EUR/ticker': 'coinbase-fil-eur.json',
  '/okx/api/v5/market/ticker?instId=FIL-USDT': 'okx-ticker.json',
}
const broken = new Set<string>()
const requested: string[] = []

let exchanges: RunningServer
let t: TestService

beforeAll(async () => {
  exchanges = await startServer((req, res) => {
    requested.push(req.url!)
    const file = ROUTES[req.url!]
    if (!file || broken.has(req.url!.split('/')[1])) {
      res.writeHead(file ? 503 : 404).end()
      return
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(fixture(file))
  }, 0)
  const exchangeUrls = Object.fromEntries(EXCHANGES.map((e) => [e.name, `${exchanges.url}/${e.name}`]))
  t = await startTestService({ deps: { exchangeUrls } })
})
afterAll(async () => {
  await t.close()
  await exchanges.close(100)
})

async function latest() {
  const r = await t.post('/public/v1/ticker/get-latest', undefined, { 'x-api-key': '' })
  expect(r.status).toBe(200)
  return r.json as { exchange: string; fetchedAt: number; data: Record<string, { price: number; volume: number }> }[]
}
async function byPair(pair: string) {
  const r = await t.post('/public/v1/ticker/get-latest-by-pair', { pair }, { 'x-api-key': '' })
  expect(r.status).toBe(200)
  return r.json
}

describe('ticker', () => {
  it('honestly returns nothing before any successful fetch', async () => {
    expect(await latest()).toEqual([])
    expect(await byPair('FIL_USD')).toEqual({ pair: 'FIL_USD', tickers: [], weightedPrice: 0 })
  })

  it("parses every exchange's recorded shape (price and 24 h base volume)", async () => {
    await t.service.ticker.pollOnce()
    const entries = await latest()
    expect(entries.map((e) => e.exchange)).toEqual(['bitfinex', 'coinbase', 'gemini', 'kraken', 'okx'])
    const by = Object.fromEntries(entries.map((e) => [e.exchange, e]))
    expect(by.kraken.data).toEqual({ FIL_USD: { price: 2.48, volume: 98342.57810332 }, FIL_EUR: { price: 2.293, volume: 20011.9314 } })
    expect(by.bitfinex.data).toEqual({ FIL_USD: { price: 2.4801, volume: 58123.30187256 } })
    expect(by.gemini.data).toEqual({ FIL_USD: { price: 2.479, volume: 20511.442618 } })
    expect(by.coinbase.data).toEqual({ FIL_USD: { price: 2.48, volume: 1503321.82 }, FIL_EUR: { price: 2.291, volume: 51044.17 } })
    expect(by.okx.data).toEqual({ FIL_USDT: { price: 2.482, volume: 2201871.5821 } })
    expect(entries.every((e) => e.fetchedAt === T0)).toBe(true)
  })

  it('weights the pair price by volume over the included exchanges', async () => {
    const r = await byPair('FIL_USD')
    const quotes = [
      [2.4801, 58123.30187256],
      [2.48, 1503321.82],
      [2.479, 20511.442618],
      [2.48, 98342.57810332],
    ]
    const expected = quotes.reduce((s, [p, v]) => s + p * v, 0) / quotes.reduce((s, [, v]) => s + v, 0)
    expect(r.tickers.map((x: { exchange: string }) => x.exchange)).toEqual(['bitfinex', 'coinbase', 'gemini', 'kraken'])
    expect(r.weightedPrice).toBeCloseTo(expected, 12)
    expect(await byPair('FIL_BTC')).toEqual({ pair: 'FIL_BTC', tickers: [], weightedPrice: 0 })
  })

  it("keeps an exchange's last success while it fails, and drops it once older than 2 minutes", async () => {
    broken.add('okx')
    try {
      t.clock.now = T0 + 60_000
      await t.service.ticker.pollOnce()
      let entries = await latest()
      expect(entries.find((e) => e.exchange === 'okx')?.fetchedAt).toBe(T0)
      expect(entries.find((e) => e.exchange === 'kraken')?.fetchedAt).toBe(T0 + 60_000)

      t.clock.now = T0 + 120_001
      entries = await latest()
      expect(entries.map((e) => e.exchange)).not.toContain('okx')
      expect((await byPair('FIL_USDT')).tickers).toEqual([])
    } finally {
      broken.delete('okx')
    }
  })

  it('with every exchange unreachable and data stale, shows nothing rather than old prices', async () => {
    for (const e of EXCHANGES) broken.add(e.name)
    t.clock.now = T0 + 10 * 60_000
    await t.service.ticker.pollOnce()
    expect(await latest()).toEqual([])
    expect((await byPair('FIL_USD')).weightedPrice).toBe(0)
    broken.clear()
  })

  it.each([[{}], [{ pair: 'filusd' }], [{ pair: 'FIL-USD' }], [{ pair: 5 }], [{ pair: 'FIL_USD', x: 1 }]])(
    '400 for get-latest-by-pair %j',
    async (body) => {
      const r = await t.post('/public/v1/ticker/get-latest-by-pair', body)
      expect(r.status).toBe(400)
      expectErrorEnvelope(r.json)
    },
  )

  it('warns once, in one line, when exchanges start failing (offline: one warning that says so), and says once when they are back', async () => {
    const lines: { level: number; exchange?: string; msg: string }[] = []
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) })
    const baseUrls = Object.fromEntries(EXCHANGES.map((e) => [e.name, `${exchanges.url}/${e.name}`]))
    const ticker = createTicker({ now: () => T0, logger, baseUrls })
    try {
      for (const e of EXCHANGES) broken.add(e.name)
      for (let i = 0; i < 3; i++) await ticker.pollOnce()
      const warnings = lines.filter((l) => l.level === 40)
      expect(warnings).toHaveLength(1)
      expect(warnings[0].msg).toMatch(/no exchange answers \(is this machine offline\?\)/)
      expect(Object.keys((warnings[0] as { errors?: object }).errors ?? {}).sort()).toEqual(EXCHANGES.map((e) => e.name).sort())

      broken.clear()
      await ticker.pollOnce()
      await ticker.pollOnce()
      const recovered = lines.filter((l) => l.level === 30 && /again/.test(l.msg))
      expect(recovered).toHaveLength(1)
      expect((recovered[0] as { exchanges?: string[] }).exchanges).toEqual(EXCHANGES.map((e) => e.name).sort())

      // One exchange failing alone is named, and the others carry on.
      broken.add(EXCHANGES[0].name)
      await ticker.pollOnce()
      const one = lines.filter((l) => l.level === 40).slice(1)
      expect(one).toHaveLength(1)
      expect(one[0].msg).toContain(`${EXCHANGES[0].name} does not answer; prices come from the other exchanges`)
    } finally {
      broken.clear()
      await ticker.stop()
    }
  })
})
