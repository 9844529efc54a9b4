import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import express from 'express'
import { describe, expect, it } from 'vitest'
import { createPublicRouter } from '../../../server/service/routes/public.ts'
import type { Ticker } from '../../../server/service/ticker/index.ts'
import { createDealServiceClient } from '../../../server/gateway/deals/market/service-client.ts'

/** A deal service answering the policy export with a recorded shape, counting calls. */
function policyService(copies: { mix: number; groups: number[] }) {
  const calls: string[] = []
  let down = false
  const fetch = (async (url: string) => {
    calls.push(String(url))
    if (down) throw new TypeError('fetch failed')
    if (!String(url).endsWith('/private/v1/onboarding-policy/export')) throw new Error(`unexpected URL ${url}`)
    const result = {
      settings: { priority: 'policy_respected' },
      mixGroup: { numberOfCopies: copies.mix },
      groups: copies.groups.map((n, i) => ({ name: `g${i}`, numberOfCopies: n, providers: [{ addressId: `f0100${i}`, comment: '' }] })),
    }
    return new Response(JSON.stringify({ error: null, result }), { status: 200, headers: { 'content-type': 'application/json' } })
  }) as typeof globalThis.fetch
  return { calls, fetch, setDown: (value: boolean) => (down = value) }
}

describe('deal service client: onboarding policy', () => {
  it('counts the copies of the mix group and every group', async () => {
    const svc = policyService({ mix: 1, groups: [2, 1] })
    const client = createDealServiceClient({ url: 'http://service.test', apiKey: 'k', fetch: svc.fetch })
    expect(await client.requiredCopies()).toBe(4)
  })

  it("names the providers of the policy's groups that want copies, once each, from the same cached answer", async () => {
    const svc = policyService({ mix: 1, groups: [2, 0, 1] })
    const client = createDealServiceClient({ url: 'http://service.test', apiKey: 'k', fetch: svc.fetch })
    expect(await client.requiredCopies()).toBe(4)
    expect(await client.policyProviders!()).toEqual(['f01000', 'f01002'])
    expect(svc.calls).toHaveLength(1)
  })

  it('asks the service once per policy lifetime, not on every engine tick', async () => {
    const svc = policyService({ mix: 3, groups: [] })
    const client = createDealServiceClient({ url: 'http://service.test', apiKey: 'k', fetch: svc.fetch })
    for (let tick = 0; tick < 5; tick++) expect(await client.requiredCopies()).toBe(3)
    expect(svc.calls).toHaveLength(1)
  })

  it('asks again once the cached policy is too old, and never caches a failure', async () => {
    const svc = policyService({ mix: 2, groups: [] })
    const client = createDealServiceClient({ url: 'http://service.test', apiKey: 'k', fetch: svc.fetch, policyTtlMs: 0 })
    svc.setDown(true)
    await expect(client.requiredCopies()).rejects.toThrow()
    svc.setDown(false)
    expect(await client.requiredCopies()).toBe(2)
    expect(await client.requiredCopies()).toBe(2)
    expect(svc.calls).toHaveLength(3)
  })
})

describe('deal service client: the FIL price for a USD ceiling', () => {
  /** The deal service's own public ticker route (service/routes/public.ts) over a ticker that says `weightedPrice`. */
  async function tickerService(weightedPrice: number) {
    const app = express()
    app.use(express.json())
    const ticker = { byPair: (pair: string) => ({ pair, tickers: [], weightedPrice }) } as unknown as Ticker
    app.use(createPublicRouter({ ticker }))
    const server = app.listen(0, '127.0.0.1')
    await once(server, 'listening')
    const { port } = server.address() as AddressInfo
    return { url: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(resolve)) }
  }

  it("reads the ticker's FIL_USD price, and none when no exchange answered lately", async () => {
    for (const [price, expected] of [
      [3.5, 3.5],
      [0, undefined],
    ] as const) {
      const svc = await tickerService(price)
      try {
        expect(await createDealServiceClient({ url: svc.url, apiKey: 'k' }).filUsd()).toBe(expected)
      } finally {
        await svc.close()
      }
    }
  })
})
