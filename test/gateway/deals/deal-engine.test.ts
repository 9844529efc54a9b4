import { randomBytes } from 'node:crypto'
import { formatUnits } from 'viem'
import { padPieceCid } from '../../../server/shared/piece.ts'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { startDealStack, type DealStack } from './harness.ts'
import { FileInfoResponseSchema } from '../../../server/shared/contracts/file-info.ts'
import { GatewayStatusResponseSchema } from '../../../server/shared/contracts/gateway-status.ts'
import { expectToMatch } from '../../helpers/contracts.ts'
import { createSimnet, simulatedCollateralBounds } from '../../../server/simulation/simnet/index.ts'

let stack: DealStack | undefined
afterEach(async () => {
  await stack?.close()
  stack = undefined
})

const details = async (s: DealStack, path: string) => (await s.fileInfo(path)).result.file.details
const groupFiles = (s: DealStack) => readdirSync(join(s.dir, 'gateway', 'groups'))

/** Uploads `bytes` as `path`, seals its group (CAR + piece CID) and returns the bytes. */
async function upload(s: DealStack, path: string, size = 300_000): Promise<Buffer> {
  const bytes = randomBytes(size)
  expect((await s.put(path, bytes)).status).toBe(201)
  await s.seal()
  return bytes
}

describe('deal engine', () => {
  it('places deals for a ready group: proposed → published → active, with the CAR fetched over HTTP and kept by the provider', async () => {
    const s = (stack = await startDealStack({ copies: 2 }))
    await upload(s, '/a.bin')
    const seen = new Set<string>()
    const done = await s.runUntil(async () => {
      const d = await details(s, '/a.bin')
      for (const deal of d.groups[0].deals) seen.add(deal.state)
      return d.groups[0].deals.filter((x: { state: string }) => x.state === 'active').length >= 2
    })
    expect(done).toBe(true)
    expect(seen).toContain('published')
    expect(seen).toContain('active')

    const d = await details(s, '/a.bin')
    const group = d.groups[0]
    expect(group.deals).toHaveLength(2)
    const groupPieceSize = (await s.gateway.content.groups())[0].pieceSize!
    const tenant = (await s.service.tenants.byName('default'))!.id
    for (const deal of group.deals) {
      expect(deal.dealId).toBeGreaterThan(0)
      expect(deal.endEpoch).toBeGreaterThan(s.simnet.headEpoch())
      // The deal is on the simulated chain: the group's piece, padded up to the provider's minimum size where it asks for more.
      const proposal = (await s.simnet.getDeal(deal.dealId))!.proposal
      const terms = (await s.simnet.providerTerms(deal.provider))!
      expect(proposal.PieceSize).toBe(Math.max(groupPieceSize, terms.minPieceSize))
      expect(proposal.PieceCID['/']).toBe(padPieceCid(group.pieceCid, groupPieceSize, proposal.PieceSize))
      // Provider collateral as Boost's client picks it: 1.2 × the market's minimum for the piece (StateDealProviderCollateralBounds).
      expect(BigInt(proposal.ProviderCollateral)).toBe((simulatedCollateralBounds(proposal.PieceSize, true).min * 6n) / 5n)
      // The simulated provider really holds the bytes it fetched, under its own folder.
      expect(existsSync(join(s.dir, 'simnet', 'providers', deal.provider, `${proposal.PieceCID['/']}.car`))).toBe(true)
      // And the deal service sees it on chain.
      expect((await s.service.deals.pieceDeals(tenant, proposal.PieceCID['/'])).map((x) => x.provider)).toContain(deal.provider)
    }

    // What pays for these copies, for the admin's link test: the client's DataCap and escrow, and when the first deal ends.
    const status = await (await fetch(`${s.gatewayServer.url}/status`, { method: 'POST' })).json()
    expectToMatch(GatewayStatusResponseSchema, status)
    const market = status.result.routes.market
    expect(market).toMatchObject({ dataCap: expect.stringMatching(/^\d+$/), dealsUntil: expect.any(String) })
    const funds = await s.simnet.marketBalance(s.clientAddress)
    expect(market.escrow).toBe(formatUnits(funds.escrow, 18))
    expect(market.locked).toBe(formatUnits(funds.locked, 18))
    const firstEnd = Math.min(...group.deals.map((x: { endEpoch: number }) => x.endEpoch))
    const untilMs = Date.parse(market.dealsUntil)
    // The first deal's end on the simulated network's clock, counted from its head at the last pass.
    expect(Math.abs(untilMs - (s.clock.now + (firstEnd - s.simnet.headEpoch()) * s.simnet.clock.epochSeconds * 1000))).toBeLessThan(
      60 * 60_000,
    )
  })

  it('offloads a group once its copies are retrievable, and a read fetches it back from providers with intact bytes while it stays offloaded', async () => {
    const s = (stack = await startDealStack({ copies: 2 }))
    expect((await fetch(`${s.gatewayServer.url}/docs`, { method: 'MKCOL' })).status).toBe(201)
    const bytes = await upload(s, '/docs/b.bin', 700_000)
    expect(await s.runUntil(async () => (await details(s, '/docs/b.bin')).state === 'offloaded')).toBe(true)

    const d = await details(s, '/docs/b.bin')
    expect(d.retrievableCopies).toBe(2)
    expect(d.groups[0].state).toBe('offloaded')
    expect(d.groups[0].deals.every((x: { isRetrievable: boolean }) => x.isRetrievable)).toBe(true)
    // Local CAR and blocks are gone.
    expect(groupFiles(s)).toEqual([])
    // The folder's own directory node is stored in the background after it changed (here: after the file's
    // group was sealed), in a new group. The folder's state is its files' (issue 38, item 5: are they safe?);
    // its listing's group shows beside them, still on its way, until it is offloaded too.
    await s.gateway.folders.settled()
    const folder = await details(s, '/docs')
    expect(folder.state).toBe('offloaded')
    expect(folder.groups.map((g: { state: string }) => g.state)).toContain('writable')
    await s.seal()
    const listingOffloaded = async () => (await details(s, '/docs')).groups.every((g: { state: string }) => g.state === 'offloaded')
    expect(await s.runUntil(listingOffloaded)).toBe(true)
    expect(groupFiles(s)).toEqual([])

    const res = await s.get('/docs/b.bin')
    expect(res.status).toBe(200)
    expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).toBe(true)
    expect((await details(s, '/docs/b.bin')).groups[0].state).toBe('offloaded')
    expect(groupFiles(s)).toEqual([])

    // A range read of offloaded data works too.
    const part = await fetch(`${s.gatewayServer.url}/docs/b.bin`, { headers: { Range: 'bytes=300000-300009' } })
    expect(part.status).toBe(206)
    expect(Buffer.from(await part.arrayBuffer()).equals(bytes.subarray(300_000, 300_010))).toBe(true)
  })

  it('keeps an offloaded file readable across a gateway restart', async () => {
    const s = (stack = await startDealStack({ copies: 2 }))
    const bytes = await upload(s, '/c.bin')
    expect(await s.runUntil(async () => (await details(s, '/c.bin')).state === 'offloaded')).toBe(true)
    await s.restartGateway()
    expect((await details(s, '/c.bin')).state).toBe('offloaded')
    const res = await s.get('/c.bin')
    expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).toBe(true)
  })

  it('stores a 15-byte file: each provider gets the piece padded with zeros up to its minimum piece size', async () => {
    const s = (stack = await startDealStack({ copies: 3 }))
    expect((await s.put('/hello.txt', new TextEncoder().encode('hello filecoin\n'))).status).toBe(201)
    await s.seal()
    const group = (await s.gateway.content.groups())[0]
    // No simulated provider takes a piece this small as it is (their minimums start at 256 bytes).
    expect(group.pieceSize).toBe(128)
    expect(await s.runUntil(async () => (await details(s, '/hello.txt')).state === 'offloaded')).toBe(true)
    for (const deal of (await details(s, '/hello.txt')).groups[0].deals) {
      const proposal = (await s.simnet.getDeal(deal.dealId))!.proposal
      expect(proposal.PieceSize).toBe((await s.simnet.providerTerms(deal.provider))!.minPieceSize)
      expect(proposal.PieceCID['/']).toBe(padPieceCid(group.pieceCid!, 128, proposal.PieceSize))
    }
    // And the file reads back from the providers, byte for byte.
    expect(await (await s.get('/hello.txt')).text()).toBe('hello filecoin\n')
  })

  it('asks another provider as soon as a provider reports that sealing failed, long before the deal would start', async () => {
    const seed = await sealingFailureSeed()
    const s = (stack = await startDealStack({ copies: 1, seed }))
    await upload(s, '/a.bin')
    expect(
      await s.runUntil(async () => (await details(s, '/a.bin')).groups[0].deals.some((d: { state: string }) => d.state === 'active')),
    ).toBe(true)
    const all = (await s.gateway.deals!.progress((await await s.gateway.content.groups())[0].id)).deals
    const failed = all.filter((d) => d.state === 'failed')
    expect(failed.length).toBeGreaterThan(0)
    for (const d of failed) expect(d.failure).toEqual({ code: 'PROVIDER_FAILED', detail: 'SEALING_FAILED' })
    // Learned from the provider while the head was still well before the start epoch the deal could never reach:
    // the next proposal starts less than a start offset (5760 epochs) after the failed one.
    const active = all.find((d) => d.state === 'active')!
    expect(failed.map((d) => d.provider)).not.toContain(active.provider)
    expect(active.startEpoch).toBeLessThan(Math.max(...failed.map((d) => d.startEpoch)) + 5760 / 2)
    // The record still names each provider that failed, replaced by the one that sealed, beside the live deals.
    const record = await s.fileInfo('/a.bin')
    expectToMatch(FileInfoResponseSchema, record)
    const [group] = record.result.file.details.groups
    expect(group.failedDeals).toEqual(
      failed.map((d) => ({
        provider: d.provider,
        ...(d.dealId !== undefined ? { dealId: d.dealId } : {}),
        reason: 'SEALING_FAILED',
        reasonCode: 'PROVIDER_FAILED',
        replaced: true,
      })),
    )
    expect(group.deals.map((d: { provider: string }) => d.provider)).toEqual([active.provider])
  })

  it('serves the CAR only to a request with the deal token', async () => {
    const s = (stack = await startDealStack({ copies: 2 }))
    await upload(s, '/t.bin')
    await s.gateway.deals!.tick()
    const deal = (await s.gateway.dealStore.ofGroup(1))[0]
    const wrong = await fetch(`${s.gatewayServer.url}/deal-transfer/${deal.id}`, { headers: { Authorization: 'Bearer not-the-token' } })
    expect(wrong.status).toBe(401)
    expect((await wrong.json()).success).toBe(false)
    const unknown = await fetch(`${s.gatewayServer.url}/deal-transfer/999999`, { headers: { Authorization: 'Bearer x' } })
    expect(unknown.status).toBe(401)
  })
})

describe('deal engine faults', () => {
  it('providers that refuse: nothing is shown for them, other providers are asked, the group still gets its copies', async () => {
    const s = (stack = await startDealStack({ copies: 2 }))
    await upload(s, '/r.bin')
    for (const p of await s.simnet.listProviders()) s.sim.setFault(p, 'refuse')
    await s.gateway.deals!.tick()
    const refused = await s.gateway.dealStore.ofGroup(1)
    expect(refused.length).toBeGreaterThan(0)
    expect(refused.every((d) => d.state === 'failed' && d.failure?.code === 'PROVIDER_DECLINED' && d.failure.detail === 'BUSY')).toBe(true)
    // Failed deals are not shown.
    expect((await details(s, '/r.bin')).groups[0].deals).toEqual([])

    for (const p of await s.simnet.listProviders()) s.sim.setFault(p, null)
    expect(await s.runUntil(async () => (await details(s, '/r.bin')).state === 'offloaded')).toBe(true)
  })

  it('providers that time out: the proposal fails after the call timeout and the engine moves on', async () => {
    const s = (stack = await startDealStack({ copies: 2 }))
    await upload(s, '/slow.bin')
    for (const p of await s.simnet.listProviders()) s.sim.setFault(p, 'timeout')
    await s.gateway.deals!.tick()
    const deals = await s.gateway.dealStore.ofGroup(1)
    expect(deals.length).toBeGreaterThan(0)
    expect(deals.every((d) => d.state === 'failed' && d.failure?.code === 'PROPOSAL_TIMEOUT')).toBe(true)
    for (const p of await s.simnet.listProviders()) s.sim.setFault(p, null)
    expect(await s.runUntil(async () => (await details(s, '/slow.bin')).state === 'offloaded')).toBe(true)
  })

  it('a provider that lies about the data: its retrieval check fails and a read is served from another provider, bytes intact', async () => {
    const s = (stack = await startDealStack({ copies: 2, retrievalCheckMs: 60_000 }))
    const bytes = await upload(s, '/lie.bin', 500_000)
    expect(await s.runUntil(async () => (await details(s, '/lie.bin')).state === 'offloaded')).toBe(true)
    const liar = (await details(s, '/lie.bin')).groups[0].deals[0].provider
    s.sim.setFault(liar, 'corrupt')

    // The read tries the liar first (both were retrievable), rejects its blocks, and uses the other copy.
    const res = await s.get('/lie.bin')
    expect(res.status).toBe(200)
    expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).toBe(true)

    s.advance(10)
    s.clock.now += 120_000
    await s.gateway.deals!.tick()
    const d = await details(s, '/lie.bin')
    expect(d.groups[0].deals.find((x: { provider: string }) => x.provider === liar).isRetrievable).toBe(false)
    expect(d.retrievableCopies).toBe(1)
  })

  it('a provider that loses the data later: copies drop honestly and the file stays readable', async () => {
    const s = (stack = await startDealStack({ copies: 2, retrievalCheckMs: 60_000 }))
    const bytes = await upload(s, '/lost.bin')
    expect(await s.runUntil(async () => (await details(s, '/lost.bin')).state === 'offloaded')).toBe(true)
    const loser = (await details(s, '/lost.bin')).groups[0].deals[1].provider
    s.sim.setFault(loser, 'lose')
    s.clock.now += 120_000
    await s.gateway.deals!.tick()
    const d = await details(s, '/lost.bin')
    expect(d.retrievableCopies).toBe(1)
    expect(d.groups[0].deals.find((x: { provider: string }) => x.provider === loser).isRetrievable).toBe(false)
    const res = await s.get('/lost.bin')
    expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).toBe(true)
  })

  it('every provider gone: a read of offloaded data is a clean 503 and the group stays offloaded', async () => {
    const s = (stack = await startDealStack({ copies: 2 }))
    await upload(s, '/gone.bin')
    expect(await s.runUntil(async () => (await details(s, '/gone.bin')).state === 'offloaded')).toBe(true)
    for (const d of (await details(s, '/gone.bin')).groups[0].deals) s.sim.setFault(d.provider, 'lose')
    await new Promise((r) => setTimeout(r, 20))
    const res = await s.get('/gone.bin')
    expect(res.status).toBe(503)
    expect(await res.text()).toContain('CONTENT_UNAVAILABLE')
    expect((await details(s, '/gone.bin')).groups[0].state).toBe('offloaded')
  })

  it('deal service unreachable: no deals and no crash; once it is back the group is placed', async () => {
    let down = true
    const s = (stack = await startDealStack({
      copies: 2,
      service: (client) => ({
        bestProviders: (q) => (down ? Promise.reject(new Error('connect ECONNREFUSED')) : client.bestProviders(q)),
        requiredCopies: () => client.requiredCopies(),
        filUsd: () => client.filUsd(),
      }),
    }))
    await upload(s, '/svc.bin')
    await s.gateway.deals!.tick()
    expect(await s.gateway.dealStore.ofGroup(1)).toEqual([])
    expect((await details(s, '/svc.bin')).state).toBe('offloading')
    expect((await details(s, '/svc.bin')).groups[0]).toMatchObject({
      reasonCode: 'DEAL_SERVICE_UNREACHABLE',
      reason: 'waiting for the deal service, which cannot be reached right now',
    })
    down = false
    expect(await s.runUntil(async () => (await details(s, '/svc.bin')).state === 'offloaded')).toBe(true)
  })
})

/** A seed whose first deal is never sealed (about 1 in 12): found by proposing to a throwaway simulated chain. */
async function sealingFailureSeed(): Promise<string> {
  for (let i = 0; i < 500; i++) {
    const seed = `sealing-fails-${i}`
    const simnet = createSimnet({ seed, now: () => Date.UTC(2025, 0, 15) })
    const provider = (await simnet.listProviders())[0]
    const head = simnet.headEpoch()
    const p = {
      PieceCID: { '/': 'x' },
      PieceSize: 256,
      VerifiedDeal: true,
      Client: 'f01000',
      Provider: provider,
      Label: '',
      StartEpoch: head + 5760,
      EndEpoch: head + 600_000,
      StoragePricePerEpoch: '0',
      ProviderCollateral: '0',
      ClientCollateral: '0',
    }
    const answer = await simnet.proposeDeal(p)
    if (answer.accepted && simnet.sealingFailsAt(answer.dealId) !== null) return seed
  }
  throw new Error('no seed with a failing first deal')
}

describe('deal engine and the client’s funds', () => {
  it('proposes nothing while the wallet has no DataCap, says why in the group reason, and goes on once it has', async () => {
    let verified = false
    const s = (stack = await startDealStack({
      copies: 1,
      providers: (port) => ({
        ...port,
        clientFunds: async (c) => ({ ...(await port.clientFunds(c)), ...(verified ? {} : { dataCap: null }) }),
      }),
    }))
    await upload(s, '/funds.bin')
    await s.runUntil(() => false, { max: 5 })
    const info = await details(s, '/funds.bin')
    expect(info.groups[0].deals).toEqual([])
    expect((await s.fileInfo('/funds.bin')).result.file.details.groups[0].reason).toMatch(/^waiting for funds: f1\w+ has no DataCap/)
    expect((await s.fileInfo('/funds.bin')).result.file.details.groups[0].reasonCode).toBe('WAITING_FOR_FUNDS')
    // The admin's link test reads the same reason from POST /status.
    const status = await (await fetch(`${s.gatewayServer.url}/status`, { method: 'POST' })).json()
    expect(status.result.deals).toMatchObject({ blocked: true, blockedReason: expect.stringMatching(/^f1\w+ has no DataCap/) })
    verified = true
    expect(await s.runUntil(async () => (await details(s, '/funds.bin')).groups[0].deals.length > 0)).toBe(true)
  })
})
