import { randomBytes } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { startDealStack, type DealStack } from './harness.ts'
import { recordingFetches } from '../../helpers/recording-fetch.ts'
import { createPublicClient, http } from 'viem'
import { toMetadataFile } from '../../../server/bridge/convert.ts'
import { GatewayFileSchema } from '../../../server/bridge/gateway-record.ts'
import { FocFundsError } from '../../../server/network/foc/client.ts'
import { epochToTimestamp } from '../../../server/shared/epochs.ts'

/**
 * The PDP route of the deal engine, end to end: the gateway's groups go
 * through the unchanged Synapse SDK to the simulated Onchain Cloud's
 * Curio-like providers and chain on loopback, beside deal-market deals on
 * the simulated network. Its chain runs on the wall clock (0.05 s epochs:
 * a proving period in 12 s), the deal market on the test's clock. The
 * route's verbs one by one (funds, stalls, refusals, proofs missed,
 * removals, adoption after a restart) are tested in milliseconds over a
 * fake client in pdp/pdp-route.test.ts; these are the few that need the
 * whole chain.
 */
describe("the deal engine's PDP route (Filecoin Onchain Cloud through the Synapse SDK)", () => {
  let stack: DealStack | undefined
  afterEach(async () => {
    await stack?.close()
    stack = undefined
  })

  const bytes = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed * 17 + (i >> 8)) & 0xff)
  const groupOf = async (s: DealStack, path: string) => (await s.fileInfo(path)).result.file.details.groups[0]
  const pdpCopies = (group: any) => (group.deals ?? []).filter((d: any) => d.route === 'pdp')

  it('stores a group as two proved PDP copies and deal-market copies, then offloads it and reads it back from a PDP provider', async () => {
    stack = await startDealStack({ seed: 'pdp route', copies: 1, foc: { copies: 2 } })
    const s = stack
    const data = bytes(300_000, 1)
    expect((await s.put('/a.bin', data)).status).toBe(201)
    await s.seal()

    // First the upload and the adds on chain: the reason says where it stands.
    const reasons = new Set<string>()
    const committed: any[] = []
    const provedInTime = await s.runUntil(
      async () => {
        const g = await groupOf(s, '/a.bin')
        if (g.reason) reasons.add(g.reason)
        committed.push(...pdpCopies(g).filter((d: any) => d.milestone === 'committed' && d.firstProofDueEpoch !== undefined))
        return pdpCopies(g).filter((d: any) => d.state === 'active').length === 2
      },
      { max: 600, pauseMs: 100, epochsPerTick: 10 },
    )
    expect(provedInTime).toBe(true)
    const proved = pdpCopies(await groupOf(s, '/a.bin'))
    expect(proved).toHaveLength(2)
    for (const copy of proved) {
      expect(copy.provider).toMatch(/^pdp:\d+$/)
      expect(copy.dataSetId).toBe(copy.dealId)
      expect(copy.pieceId).toBeGreaterThanOrEqual(0)
      expect(copy.lastProofEpoch).toBeGreaterThan(0)
    }
    expect(new Set(proved.map((c: any) => c.provider)).size).toBe(2)
    expect(proved.map((c: any) => c.milestone)).toEqual(['proved', 'proved'])
    // On the way, copies were committed with their first proof due when its challenge window opens; the proofs came after
    // (a copy replaced on a loaded machine, its provider not among the proved ones, has nothing to compare with).
    const compared = committed.filter((c) => proved.some((p: any) => p.provider === c.provider))
    expect(compared.length).toBeGreaterThan(0)
    for (const c of compared) {
      expect(proved.find((p: any) => p.provider === c.provider).lastProofEpoch).toBeGreaterThanOrEqual(c.firstProofDueEpoch)
    }
    expect(
      [...reasons].some((r) =>
        /PDP cop(y|ies) committed on chain; the offload waits for (its|their) first proof, due in about \d+ (second|minute)s?/.test(r),
      ),
    ).toBe(true)

    // Both routes' copies retrievable: offloaded, and the bytes come back from a provider.
    expect(await s.runUntil(async () => (await groupOf(s, '/a.bin')).state === 'offloaded', { max: 400, pauseMs: 20 })).toBe(true)
    const offloaded = await groupOf(s, '/a.bin')
    expect(offloaded.state).toBe('offloaded')
    expect(pdpCopies(offloaded).every((d: any) => d.isRetrievable)).toBe(true)
    expect(offloaded.deals.filter((d: any) => d.route === undefined && d.state === 'active')).toHaveLength(1)
    // Read from a PDP provider's trustless gateway, warm copies first.
    const { result: back, urls } = await recordingFetches(async () => {
      const res = await s.get('/a.bin')
      return { status: res.status, body: Buffer.from(await res.arrayBuffer()) }
    })
    expect(back.status).toBe(200)
    expect(back.body.equals(Buffer.from(data))).toBe(true)
    const pdpHosts = new Set(s.foc!.providers.map((p) => new URL(p.url).host))
    expect(urls.some((u) => pdpHosts.has(u.host) && u.pathname.startsWith('/ipfs/'))).toBe(true)

    // The account's standing, for the admin page's link test: the deposit pays well beyond today.
    const probe = await fetch(`${s.gatewayServer.url}/status`, { method: 'POST' })
    const standing = (await probe.json()).result.routes.onchainCloud
    expect(standing.status).toBe('HEALTHY')
    expect(Number(standing.funds)).toBeGreaterThan(0)
    expect(Date.parse(standing.fundedUntil)).toBeGreaterThan(Date.now())
  }, 240_000)

  const active = (group: any) => pdpCopies(group).filter((d: any) => d.state === 'active')
  const simulatedProvider = (s: DealStack, provider: string) => s.foc!.providers.find((p) => `pdp:${p.providerId}` === provider)!.provider
  /** Runs the engine until the file has two proved PDP copies; returns them. */
  async function twoProved(s: DealStack, path: string, epochsPerTick = 10): Promise<any[]> {
    expect(await s.runUntil(async () => active(await groupOf(s, path)).length === 2, { max: 600, pauseMs: 100, epochsPerTick })).toBe(true)
    return active(await groupOf(s, path))
  }

  /** Makes `loser` lose the file's piece, and runs the engine until two other providers hold retrievable copies. */
  async function replacedAfterLoss(s: DealStack, path: string, loser: string): Promise<boolean> {
    await simulatedProvider(s, loser).setFault('lose')
    return s.runUntil(
      async () => {
        const copies = active(await groupOf(s, path)).filter((d: any) => d.isRetrievable)
        return copies.length === 2 && !copies.some((d: any) => d.provider === loser)
      },
      { max: 900, pauseMs: 100, epochsPerTick: 10 },
    )
  }

  it("repairs an offloaded group's PDP copies while the deal service is down", async () => {
    let serviceDown = false
    stack = await startDealStack({
      seed: 'pdp repair',
      copies: 1,
      retrievalCheckMs: 600_000,
      // All three endorsed: the replacement is the group's only new copy, and the SDK puts a first copy only on an
      // endorsed provider, which the third must then be.
      foc: { copies: 2, endorsed: 3 },
      service: (client) => ({
        bestProviders: (q) => (serviceDown ? Promise.reject(new Error('connect ECONNREFUSED')) : client.bestProviders(q)),
        requiredCopies: () => client.requiredCopies(),
        filUsd: () => client.filUsd(),
      }),
    })
    const s = stack
    expect((await s.put('/r.bin', bytes(180_000, 6))).status).toBe(201)
    await s.seal()
    await twoProved(s, '/r.bin')
    expect(await s.runUntil(async () => (await groupOf(s, '/r.bin')).state === 'offloaded', { max: 400, pauseMs: 20 })).toBe(true)
    const before = active(await groupOf(s, '/r.bin'))

    // The service goes away while a new file waits for deals, then a PDP provider loses the first file's piece:
    // its group is reloaded from a remaining copy and a new PDP copy is made on the third provider, with no deal
    // service to ask.
    serviceDown = true
    expect((await s.put('/r2.bin', bytes(90_000, 8))).status).toBe(201)
    await s.seal()
    expect(await replacedAfterLoss(s, '/r.bin', before[0].provider)).toBe(true)
    await s.gateway.deals!.tick()
    const market = (await s.gateway.dealStore.ofGroup(1)).filter((d) => d.route === 'market')
    expect(market.filter((d) => d.state === 'active')).toHaveLength(1)
    expect((await s.gateway.dealStore.ofGroup(2)).filter((d) => d.route === 'market')).toEqual([])
    // And the group goes back to offloaded once its copies are back.
    expect(
      await s.runUntil(async () => (await groupOf(s, '/r.bin')).state === 'offloaded', { max: 400, pauseMs: 20, epochsPerTick: 10 }),
    ).toBe(true)
  }, 300_000)

  it('says what a group reloaded for repair waits for: the funds for its new PDP copy, not the reload', async () => {
    // Once the first copies are made, the account cannot pay for more: the wallet holds too little to deposit.
    let short = false
    stack = await startDealStack({
      seed: 'pdp repair funds',
      copies: 0,
      withoutService: true,
      retrievalCheckMs: 600_000,
      foc: {
        copies: 2,
        endorsed: 3,
        client: (c) => ({
          ...c,
          funding: (bytes, request) =>
            short
              ? Promise.resolve({ ready: false, depositNeeded: 10n ** 17n, needsApproval: false, ratePerEpoch: 0n })
              : c.funding(bytes, request),
          fund: (amount) => (short ? Promise.reject(new FocFundsError('the wallet holds 0 USDFC')) : c.fund(amount)),
        }),
      },
    })
    const s = stack
    expect((await s.put('/w.bin', bytes(100_000, 11))).status).toBe(201)
    await s.seal()
    const [lost] = await twoProved(s, '/w.bin')
    expect(
      await s.runUntil(async () => (await groupOf(s, '/w.bin')).state === 'offloaded', { max: 400, pauseMs: 20, epochsPerTick: 10 }),
    ).toBe(true)
    short = true
    await simulatedProvider(s, lost.provider).setFault('lose')
    let waiting: any
    expect(
      await s.runUntil(
        async () => {
          const g = await groupOf(s, '/w.bin')
          if (g.state === 'reload' && g.reasonCode === 'WAITING_FOR_FUNDS') waiting = g
          return waiting !== undefined
        },
        { max: 900, pauseMs: 100, epochsPerTick: 10 },
      ),
    ).toBe(true)
    expect(waiting.reason).toMatch(/^reloaded to make new copies: no funds: deposit USDFC: the wallet holds 0 USDFC; meanwhile: /)
    // Funds again: the new copy is made and the group goes back to offloaded.
    short = false
    expect(
      await s.runUntil(
        async () => {
          const g = await groupOf(s, '/w.bin')
          return g.state === 'offloaded' && active(g).filter((d: any) => d.isRetrievable && d.provider !== lost.provider).length === 2
        },
        { max: 900, pauseMs: 100, epochsPerTick: 10 },
      ),
    ).toBe(true)
  }, 300_000)

  it('stores on the Onchain Cloud only with DEAL_COPIES=0, with no deal service and no Lotus chain read: offloaded on its two proved PDP copies, dated on their own chain, and read back', async () => {
    let lotusHeads = 0
    stack = await startDealStack({
      seed: 'pdp only',
      copies: 0,
      withoutService: true,
      foc: { copies: 2 },
      // The deal market's chain, counted: with the market off nothing asks it.
      providers: (port) => ({
        ...port,
        chainHead: () => {
          lotusHeads++
          return port.chainHead()
        },
      }),
    })
    const s = stack
    const data = bytes(160_000, 7)
    expect((await s.put('/p.bin', data)).status).toBe(201)
    await s.seal()
    await twoProved(s, '/p.bin')
    expect(
      await s.runUntil(async () => (await groupOf(s, '/p.bin')).state === 'offloaded', { max: 400, pauseMs: 20, epochsPerTick: 10 }),
    ).toBe(true)
    // No deal was proposed, no deal service was needed (its stand-in refuses every question), and the funds
    // the deal market would need were never asked for.
    expect((await s.gateway.dealStore.ofGroup(1)).filter((d) => d.route === 'market')).toEqual([])
    await s.gateway.deals!.tick()
    expect(s.gateway.deals!.standing().market?.funds).toBeUndefined()
    expect(s.gateway.deals!.routes).toEqual(['pdp'])
    expect(lotusHeads).toBe(0)
    const back = await s.get('/p.bin')
    expect(Buffer.from(await back.arrayBuffer()).equals(Buffer.from(data))).toBe(true)

    // The copies' dates are the FEVM chain's, whose clock (the wall clock, 20 epochs a second) is not the simulated
    // Lotus chain's (the test's, 30 s epochs): the record dates them, and the app passes them through.
    const record = (await s.fileInfo('/p.bin')).result.file
    const copies = pdpCopies(record.details.groups[0])
    const chain = createPublicClient({ transport: http(s.foc!.rpcUrl) })
    // The clock the gateway read from the chain's blocks (kept once read).
    const clock = await s.focClient!.chainClock()
    for (const copy of copies) {
      const proofBlock = await chain.getBlock({ blockNumber: BigInt(copy.lastProofEpoch) })
      // Blocks are stamped to the whole second, so the gateway read this 20-epochs-a-second clock from block 0 and a head
      // at least 10 minutes (12 000 epochs) later to a second at each end: epoch n is dated to 2 + n / 12 000 s.
      expect(Math.abs(copy.lastProofTimestamp - Number(proofBlock.timestamp))).toBeLessThanOrEqual(2 + copy.lastProofEpoch / 12_000)
      // Where no block is yet, the date is where that clock puts the epoch.
      expect(copy.endTimestamp).toBe(Math.floor(clock.genesis + copy.endEpoch * clock.epochSeconds))
      expect(Math.abs(epochToTimestamp(s.simnet.clock, copy.lastProofEpoch) - copy.lastProofTimestamp)).toBeGreaterThan(86_400)
    }
    const metadata = toMetadataFile(GatewayFileSchema.parse(record), '/p.bin', s.simnet.clock)
    const shown = metadata.details.groups[0].deals!.filter((d) => d.route === 'pdp')
    expect(shown.map((d) => [d.lastProofTimestamp, d.endTimestamp])).toEqual(copies.map((c: any) => [c.lastProofTimestamp, c.endTimestamp]))
    expect(metadata.details.expirationTimestamp).toBe(Math.max(...copies.map((c: any) => c.endTimestamp)))
  }, 240_000)

  it('tells a provider that stops proving on the record, for the Files list and in the tab within one proving period of its first missed deadline', async () => {
    stack = await startDealStack({ seed: 'pdp faults', copies: 0, withoutService: true, foc: { copies: 2 } })
    const s = stack
    expect((await s.put('/m.bin', bytes(120_000, 9))).status).toBe(201)
    await s.seal()
    await twoProved(s, '/m.bin')
    expect(
      await s.runUntil(async () => (await groupOf(s, '/m.bin')).state === 'offloaded', { max: 400, pauseMs: 20, epochsPerTick: 10 }),
    ).toBe(true)
    const [failing] = active(await groupOf(s, '/m.bin'))
    await simulatedProvider(s, failing.provider).setFault('stop-proving')
    // The simulated chain runs on the wall clock (a 240-epoch proving period in 12 s); the engine polls each copy every 6 epochs.
    let seen: { group: any; head: number } | undefined
    const told = await s.runUntil(
      async () => {
        const group = await groupOf(s, '/m.bin')
        if (!pdpCopies(group).some((d: any) => d.provider === failing.provider && d.missedProofEpoch !== undefined)) return false
        seen = { group, head: Number((await s.focClient!.account()).epoch) }
        return true
      },
      { max: 900, pauseMs: 100, epochsPerTick: 10 },
    )
    expect(told).toBe(true)
    const period = 240
    const copy = pdpCopies(seen!.group).find((d: any) => d.provider === failing.provider)
    // The first period missed is the one after its last proof's, told before the next one ends; it still counts meanwhile.
    expect(copy.missedProofEpoch - copy.lastProofEpoch).toBeGreaterThanOrEqual(period)
    expect(copy.missedProofEpoch - copy.lastProofEpoch).toBeLessThan(2 * period)
    expect(seen!.head - copy.missedProofEpoch).toBeLessThanOrEqual(period)
    expect(copy).toMatchObject({ state: 'active', stopsCountingEpoch: copy.missedProofEpoch + 2 * period })
    // The offloaded group says so, as needing attention, and so does the Files list.
    expect(seen!.group).toMatchObject({ state: 'offloaded', reasonCode: 'PROOF_MISSED' })
    // (When, from the route's head: here the gateway's clock is the deal market's, moved by the test, not the FOC chain's.)
    expect(seen!.group.reason).toMatch(new RegExp(`^the PDP copy on ${failing.provider} missed its proof; it stops counting `))
    const listing = await fetch(`${s.gatewayServer.url}/folder-states`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ folderPath: '/' }),
    })
    const entry = (await listing.json()).result.folder.entries.find((e: any) => e.name === 'm.bin')
    expect(entry.attention).toMatchObject({ code: 'PROOF_MISSED' })
    // The tab's record, as the bridge makes it: the miss and the end of its grace dated on the chain's clock, as the gateway
    // read it from its blocks. Blocks are stamped to the whole second, so the line read from two of them may be a second
    // off at its ends and a little more past the head (its slope from whole seconds): within two seconds of the chain's own.
    const clock = { name: 'devnet' as const, genesis: s.foc!.genesisTimestamp, epochSeconds: 0.05 }
    const file = toMetadataFile(GatewayFileSchema.parse((await s.fileInfo('/m.bin')).result.file), '/m.bin', clock)
    const shown = file.details.groups[0].deals!.find((d) => d.provider === failing.provider)!
    expect(shown.missedProofEpoch).toBe(copy.missedProofEpoch)
    const onChain = (epoch: number) => s.foc!.genesisTimestamp + epoch * 0.05
    expect(Math.abs(shown.missedProofTimestamp! - onChain(copy.missedProofEpoch!))).toBeLessThanOrEqual(2)
    expect(Math.abs(shown.stopsCountingTimestamp! - onChain(copy.stopsCountingEpoch!))).toBeLessThanOrEqual(2)
  }, 300_000)

  it('closes a group at the largest CAR one upload takes, and that full group gets its two PDP copies and a deal and is offloaded', async () => {
    // The SDK's limit (1 065 353 216 bytes, a 1 GiB group's CAR) made small, as a 1 GiB group would be too slow
    // here: two 256 KiB leaves (kubo-cid-v1's) and their framing (524 480 bytes) fit 600 000, a third does not.
    const maxUploadBytes = 600_000
    stack = await startDealStack({
      seed: 'pdp cap',
      copies: 1,
      cidProfile: 'kubo-cid-v1',
      foc: { copies: 2, maxUploadBytes },
    })
    const s = stack
    // Random bytes: the pattern of `bytes` repeats from one 256 KiB leaf to the next, and leaves alike are stored once.
    const data = randomBytes(700_000)
    expect((await s.put('/cap.bin', data)).status).toBe(201)
    await s.seal()
    const groups = await s.gateway.content.groups()
    expect(groups).toHaveLength(2)
    // The first group closed at the cap, not at its 1 MiB GROUP_SIZE.
    expect(groups[0].carSize!).toBeLessThanOrEqual(maxUploadBytes)
    expect(groups[0].carSize!).toBeGreaterThan(500_000)
    expect(
      await s.runUntil(async () => (await s.gateway.content.groups()).every((g) => g.state === 'offloaded'), {
        max: 900,
        pauseMs: 100,
        epochsPerTick: 10,
      }),
    ).toBe(true)
    // Through both routes: a deal-market deal and two proved PDP copies of each full group.
    for (const id of [1, 2]) {
      const copies = (await s.gateway.dealStore.ofGroup(id)).filter((d) => d.state === 'active')
      expect(copies.map((d) => d.route).sort()).toEqual(['market', 'pdp', 'pdp'])
    }
    expect(Buffer.from(await (await s.get('/cap.bin')).arrayBuffer()).equals(Buffer.from(data))).toBe(true)
  }, 240_000)

  it('stores groups sealed together in one data set per provider, none refused on chain', async () => {
    // Two uploads side by side before any data set exists would each create one on the same providers, and the
    // second's lockup, not yet counted by the cost check, was refused on chain ("execution reverted").
    stack = await startDealStack({ seed: 'pdp together', copies: 1, foc: { copies: 2 } })
    const s = stack
    const paths = ['/f1.bin', '/f2.bin', '/f3.bin']
    for (const [i, path] of paths.entries()) {
      expect((await s.put(path, bytes(130_000, 10 + i))).status).toBe(201)
      await s.seal()
    }
    expect(
      await s.runUntil(
        async () => {
          for (const path of paths) if (active(await groupOf(s, path)).length < 2) return false
          return true
        },
        { max: 900, pauseMs: 100, epochsPerTick: 10 },
      ),
    ).toBe(true)
    const rows = (await Promise.all([1, 2, 3].map((id) => s.gateway.dealStore.ofGroup(id)))).flat().filter((d) => d.route === 'pdp')
    expect(rows.filter((d) => d.state === 'failed').map((d) => d.failure)).toEqual([])
    const dataSets = new Map<string, Set<number>>()
    for (const d of rows) dataSets.set(d.provider, (dataSets.get(d.provider) ?? new Set()).add(d.dataSetId!))
    expect([...dataSets.values()].map((ids) => ids.size)).toEqual([1, 1])
  }, 240_000)
})
