import { randomBytes } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import type { StorageProviderPort } from '../../../server/gateway/deals/market/provider-port.ts'
import type { DealServiceClient } from '../../../server/gateway/deals/index.ts'
import type { DealProposal } from '../../../server/network/types.ts'
import { loadConfig } from '../../../server/shared/config.ts'
import { perGiBEpochAtMost, toAtto } from '../../../server/shared/deal-price.ts'
import { piecePricePerEpoch } from '../../../server/shared/piece.ts'
import { GatewayStatusResponseSchema } from '../../../server/shared/contracts/gateway-status.ts'
import { expectToMatch } from '../../helpers/contracts.ts'
import { startDealStack, type DealStack } from './harness.ts'

/**
 * Deals once Fil+ has ended (FIP-0118, network version 29 from genesis
 * here): with DEAL_MAX_PRICE_PER_TIB_MONTH the gateway pays each provider
 * its own ask for unverified deals (boost storagemarket/storedask/storedask.go:
 * attoFIL per GiB per epoch), never more than the ceiling, and offers
 * nothing to a provider asking more.
 */
let stack: DealStack | undefined
afterEach(async () => {
  await stack?.close()
  stack = undefined
})

const PLENTY = 10n ** 21n
/** The asks the gateway reads: every provider asks at least 1e8 attoFIL per GiB per epoch (0.0088 FIL per TiB-month). */
const PAID_ASK = 100_000_000n

/**
 * Keeps the proposals sent, and makes the asks the gateway reads paid ones: never below the provider's own
 * (which it still checks), and 1e9 (0.088 FIL per TiB-month) for those `expensive` names.
 */
function paidAsks(sent: DealProposal[], asks: Map<string, bigint>, expensive: (provider: string) => boolean) {
  return (port: StorageProviderPort): StorageProviderPort => ({
    ...port,
    ask: async (provider, options) => {
      const ask = await port.ask(provider, options)
      if (!ask) return ask
      const real = ask.price > PAID_ASK ? ask.price : PAID_ASK
      const price = expensive(provider) ? 1_000_000_000n : real
      asks.set(provider, price)
      return { ...ask, price }
    },
    propose: (proposal, transfer, options) => {
      sent.push(proposal)
      return port.propose(proposal, transfer, options)
    },
  })
}

/** The deal service as if its asks were stale: it names providers whatever their price, so the gateway's own check is what counts. */
const anyPrice = (client: DealServiceClient): DealServiceClient => ({
  ...client,
  bestProviders: (q) => client.bestProviders({ ...q, storagePricePerEpoch: '1000000000000' }),
})

async function upload(s: DealStack, path: string): Promise<void> {
  expect((await s.put(path, randomBytes(300_000))).status).toBe(201)
  await s.seal()
}

/** POST /status as the admin's link test reads it, held to its contract. */
async function status(s: DealStack) {
  const body = await (await fetch(`${s.gatewayServer.url}/status`, { method: 'POST' })).json()
  expectToMatch(GatewayStatusResponseSchema, body)
  return body.result
}

describe('unverified deals under DEAL_MAX_PRICE_PER_TIB_MONTH', () => {
  it('pays each provider its own ask, never above the ceiling, and offers nothing to one asking more than it', async () => {
    const sent: DealProposal[] = []
    const asks = new Map<string, bigint>()
    const expensive = (p: string) => Number(p.slice(2)) % 2 === 0
    const s = (stack = await startDealStack({
      copies: 1,
      nv29Epoch: 0,
      // 0.05 FIL a TiB-month: about 5.65e8 attoFIL per GiB per epoch, above every simulated ask, below 1e9.
      maxPrice: { amount: '0.05', currency: 'FIL' },
      escrow: PLENTY,
      providers: paidAsks(sent, asks, expensive),
      service: anyPrice,
    }))
    const ceiling = perGiBEpochAtMost(toAtto('0.05'))
    await upload(s, '/one.bin')
    await upload(s, '/two.bin')
    expect(await s.runUntil(() => sent.length >= 2, { max: 20 })).toBe(true)
    for (const p of sent) {
      expect(p.VerifiedDeal).toBe(false)
      expect(expensive(p.Provider)).toBe(false)
      const ask = asks.get(p.Provider)!
      expect(ask).toBeLessThanOrEqual(ceiling)
      // The provider's ask for this piece, as Boost's client writes it and Boost checks it (storagemarket/deal_acceptance.go).
      expect(p.StoragePricePerEpoch).toBe(piecePricePerEpoch(ask, p.PieceSize).toString())
      expect(BigInt(p.StoragePricePerEpoch)).toBeGreaterThan(0n)
    }
    // The admin's link test reads the route, the price and why from POST /status.
    const plan = (await status(s)).nextGroup.find((r: { route: string }) => r.route === 'market')
    expect(plan).toMatchObject({ route: 'market', copies: 1, maxPricePerTiBMonth: '0.05' })
    expect(plan.why).toMatch(
      /^unverified deals at each provider's own ask, at most 0\.05 FIL per TiB-month \(DEAL_MAX_PRICE_PER_TIB_MONTH 0\.05 FIL\)/,
    )
    expect(plan.why).toMatch(/the last one went to f0\d+ at 0\.0\d+ FIL per TiB-month/)
  })

  it('proposes nothing when every provider asks more than the ceiling, and the group says so', async () => {
    const sent: DealProposal[] = []
    const s = (stack = await startDealStack({
      copies: 1,
      nv29Epoch: 0,
      maxPrice: { amount: '0.001', currency: 'FIL' },
      escrow: PLENTY,
      providers: paidAsks(sent, new Map(), () => false),
      service: anyPrice,
    }))
    await upload(s, '/dear.bin')
    await s.runUntil(() => false, { max: 3 })
    expect(sent).toEqual([])
    const reason = (await s.fileInfo('/dear.bin')).result.file.details.groups[0].reason
    expect(reason).toMatch(
      /NO_SUITABLE_PROVIDER: f0\d+ asks 0\.0\d+ FIL per TiB-month, more than DEAL_MAX_PRICE_PER_TIB_MONTH \(0\.001 FIL per TiB-month\)/,
    )
  })

  it('works a USD ceiling out at the ticker price, and proposes nothing while the ticker has no price', async () => {
    const sent: DealProposal[] = []
    let filUsd: number | undefined = 2.5
    const s = (stack = await startDealStack({
      copies: 1,
      nv29Epoch: 0,
      maxPrice: { amount: '0.125', currency: 'USD' },
      escrow: PLENTY,
      providers: paidAsks(sent, new Map(), () => false),
      service: (client) => ({ ...anyPrice(client), filUsd: async () => filUsd }),
    }))
    await upload(s, '/usd.bin')
    expect(await s.runUntil(() => sent.length > 0, { max: 20 })).toBe(true)
    // 0.125 USD at 2.5 USD a FIL: 0.05 FIL a TiB-month.
    const plan = (await status(s)).nextGroup.find((r: { route: string }) => r.route === 'market')
    expect(plan).toMatchObject({ maxPricePerTiBMonth: '0.05', maxPricePerTiBMonthUsd: '0.13' })
    for (const p of sent)
      expect(BigInt(p.StoragePricePerEpoch)).toBeLessThanOrEqual(piecePricePerEpoch(perGiBEpochAtMost(toAtto('0.05')), p.PieceSize))

    filUsd = undefined
    const before = sent.length
    await upload(s, '/later.bin')
    await s.runUntil(() => false, { max: 3 })
    expect(sent.length).toBe(before)
    const now = await status(s)
    expect(now.deals.blocked).toBe(true)
    expect(now.deals.blockedReason).toMatch(/DEAL_MAX_PRICE_PER_TIB_MONTH 0\.125 USD needs the price of FIL in USD/)
    expect(now.nextGroup.find((r: { route: string }) => r.route === 'market')).toMatchObject({ copies: 0 })
  })
})

describe("mainnet's defaults without a ceiling", () => {
  it('propose no deal at all, store the groups as PDP copies, and say so and why to the link test', async () => {
    // The deal terms NETWORK=mainnet with FOC_RPC_URL gives when DEAL_MAX_PRICE_PER_TIB_MONTH is not set.
    const mainnet = loadConfig({ NETWORK: 'mainnet', FOC_RPC_URL: 'https://api.node.glif.io/rpc/v1' }).gateway.deals!
    const sent: DealProposal[] = []
    const s = (stack = await startDealStack({
      copies: mainnet.copies,
      marketOff: mainnet.marketOff,
      nv29Epoch: 0,
      withoutService: true,
      providers: paidAsks(sent, new Map(), () => false),
      foc: { copies: 1 },
    }))
    await upload(s, '/pdp-only.bin')
    const state = async () => (await s.fileInfo('/pdp-only.bin')).result.file.details.state
    expect(await s.runUntil(async () => (await state()) === 'offloaded', { max: 400, pauseMs: 20 })).toBe(true)
    expect(sent).toEqual([])
    expect((await s.gateway.dealStore.ofGroup(1)).filter((d) => d.state === 'active').map((d) => d.route)).toEqual(['pdp'])
    const plans = (await status(s)).nextGroup
    expect(plans).toEqual([
      {
        route: 'market',
        copies: 0,
        why: expect.stringMatching(/^on mainnet every deal is paid since Fil\+ ended.*set DEAL_MAX_PRICE_PER_TIB_MONTH/),
      },
      {
        route: 'onchainCloud',
        copies: 1,
        why: expect.stringMatching(
          /^PDP_COPIES: a copy on Filecoin Onchain Cloud, proved by its provider every proving period and paid in USDFC/,
        ),
      },
    ])
  })
})
