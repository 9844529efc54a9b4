import { createServer, type Server } from 'node:http'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createPieceHasher } from '../../server/shared/piece.ts'
import { createSimnet, simulatedCollateralBounds, type Simnet } from '../../server/simulation/simnet/index.ts'
import { createSimulatedProviders, minimumPricePerEpoch, type SimulatedProviders } from '../../server/simulation/simnet/sim-providers.ts'
import { providerProfile, type ProviderKind } from '../../server/simulation/simnet/provider-kind.ts'
import type { DealProposal, ProviderTerms } from '../../server/network/types.ts'

const GENESIS = 1704067200
const T0 = Date.UTC(2025, 0, 15)
// Plain bytes: every case here fails (or refuses) before the provider would index them as a CAR.
const PAYLOAD = Buffer.alloc(4096, 7)

let dir: string
let server: Server
let url: string
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sim-providers-'))
  server = createServer((req, res) => {
    if (req.headers.authorization !== 'Bearer good') return void res.writeHead(401).end()
    res.writeHead(200, { 'Content-Length': PAYLOAD.length }).end(PAYLOAD)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}/car`
})
afterEach(async () => {
  await new Promise((r) => server.close(r))
  rmSync(dir, { recursive: true, force: true })
})

const piece = () => {
  const h = createPieceHasher()
  h.update(PAYLOAD)
  return h.digest()
}

async function onlineHttpProvider(net: Simnet, kind?: ProviderKind, test: (t: ProviderTerms) => boolean = () => true) {
  for (const p of await net.listProviders()) {
    const t = (await net.providerTerms(p))!
    if (t.online && t.transferTypes.includes('http') && (!kind || providerProfile(p).kind === kind) && test(t)) return p
  }
  throw new Error('no online provider')
}

const proposal = (provider: string, pieceCid: string, pieceSize: number, head: number): DealProposal => ({
  PieceCID: { '/': pieceCid },
  PieceSize: pieceSize,
  VerifiedDeal: true,
  Client: 'f01000',
  Provider: provider,
  Label: '',
  StartEpoch: head + 5760,
  EndEpoch: head + 5760 + 518_400,
  StoragePricePerEpoch: '0',
  ProviderCollateral: simulatedCollateralBounds(pieceSize, true).min.toString(),
  ClientCollateral: '0',
})

async function settle(sim: SimulatedProviders, provider: string, id: string) {
  for (let i = 0; i < 200; i++) {
    const s = sim.proposalState(provider, id)
    if (s.state !== 'transferring') return s
    await new Promise((r) => setTimeout(r, 10))
  }
  throw new Error('transfer never finished')
}

describe('simulated storage providers', () => {
  it('refuses bytes whose piece CID is not the proposed one, and never publishes them', async () => {
    const net = createSimnet({ seed: 'sp', genesis: GENESIS, now: () => T0 })
    const sim = createSimulatedProviders({ simnet: net, dir, retryDelayMs: 5 })
    const provider = await onlineHttpProvider(net)
    const other = 'baga6ea4seaqao7s73y24kcutaosvacpdjgfe5pw76ooefnyqw4ynr3d2y6x2mpq'
    const answer = await sim.propose(proposal(provider, other, piece().pieceSize, net.headEpoch()), {
      url,
      headers: { Authorization: 'Bearer good' },
      size: PAYLOAD.length,
    })
    expect(answer.accepted).toBe(true)
    if (!answer.accepted) return
    expect(await settle(sim, provider, answer.proposalId)).toEqual({ state: 'failed', reason: 'PIECE_CID_MISMATCH' })
  })

  it('fails a transfer the gateway does not authorise', async () => {
    const net = createSimnet({ seed: 'sp', genesis: GENESIS, now: () => T0 })
    const sim = createSimulatedProviders({ simnet: net, dir, retryDelayMs: 5 })
    const provider = await onlineHttpProvider(net)
    const p = piece()
    const answer = await sim.propose(proposal(provider, p.pieceCid, p.pieceSize, net.headEpoch()), {
      url,
      headers: { Authorization: 'Bearer bad' },
      size: PAYLOAD.length,
    })
    if (!answer.accepted) throw new Error('refused')
    // Boost asks HEAD first and stops at a 4xx; Curio's GET fails with the status after its retries.
    expect(await settle(sim, provider, answer.proposalId)).toEqual({
      state: 'failed',
      reason:
        providerProfile(provider).kind === 'boost'
          ? 'http HEAD req failed: code: 401'
          : 'http read failed after 15 retries: lastErr: http status: 401',
    })
  })

  it('refuses a price per epoch below the ask per GiB × PieceSize / 2^30 (rounded down), verified or not', async () => {
    const net = createSimnet({ seed: 'sp', genesis: GENESIS, now: () => T0 })
    const sim = createSimulatedProviders({ simnet: net, dir, retryDelayMs: 5 })
    const provider = await onlineHttpProvider(net, undefined, (t) => t.unverifiedPrice !== '0' && t.minPieceSize <= 8192)
    const terms = (await net.providerTerms(provider))!
    const p = piece()
    const min = minimumPricePerEpoch(BigInt(terms.unverifiedPrice), p.pieceSize)
    // 4096 bytes fill an 8 KiB piece: price × 8192 / 2^30, rounded down (a 10^8 ask: 762.9… → 762).
    expect(min).toBe((BigInt(terms.unverifiedPrice) * 8192n) / 2n ** 30n)
    const unverified = {
      ...proposal(provider, p.pieceCid, p.pieceSize, net.headEpoch()),
      VerifiedDeal: false,
      ProviderCollateral: simulatedCollateralBounds(p.pieceSize, false).min.toString(),
    }
    expect(
      await sim.propose(
        { ...unverified, StoragePricePerEpoch: (min - 1n).toString() },
        { url, headers: { Authorization: 'Bearer good' }, size: PAYLOAD.length },
      ),
    ).toEqual({
      accepted: false,
      reason: `storage price per epoch less than asking price: ${min - 1n} < ${min}`,
    })
    expect(
      (
        await sim.propose(
          { ...unverified, StoragePricePerEpoch: min.toString() },
          { url, headers: { Authorization: 'Bearer good' }, size: PAYLOAD.length },
        )
      ).accepted,
    ).toBe(true)
    await sim.close()
  })

  it('Curio refuses a PieceSize that is not the padded size of Transfer.Size; Boost takes it and pads the CommP up to it', async () => {
    const net = createSimnet({ seed: 'sp', genesis: GENESIS, now: () => T0 })
    const sim = createSimulatedProviders({ simnet: net, dir, retryDelayMs: 5 })
    const p = piece()
    const bigger = p.pieceSize * 4
    const curio = await onlineHttpProvider(net, 'curio', (t) => t.verifiedPrice === '0' && t.minPieceSize <= 8192)
    const boost = await onlineHttpProvider(net, 'boost', (t) => t.verifiedPrice === '0' && t.minPieceSize <= 8192)
    const withSize = (provider: string) => ({
      ...proposal(provider, p.pieceCid, bigger, net.headEpoch()),
      ProviderCollateral: simulatedCollateralBounds(bigger, true).min.toString(),
    })
    const transfer = { url, headers: { Authorization: 'Bearer good' }, size: PAYLOAD.length }
    expect(await sim.propose(withSize(curio), transfer)).toEqual({
      accepted: false,
      reason: `deal proposal piece size ${bigger} doesn't match padded piece size ${p.pieceSize}`,
    })
    const taken = await sim.propose(withSize(boost), transfer)
    if (!taken.accepted) throw new Error(taken.reason)
    // The unpadded piece CID against a 4× PieceSize is a mismatch: Boost pads CommP to the PieceSize before comparing.
    expect(await settle(sim, boost, taken.proposalId)).toEqual({ state: 'failed', reason: 'PIECE_CID_MISMATCH' })
    await sim.close()
  })

  it('refuses every proposal while given the refuse fault', async () => {
    const net = createSimnet({ seed: 'sp', genesis: GENESIS, now: () => T0 })
    const sim = createSimulatedProviders({ simnet: net, dir, retryDelayMs: 5 })
    const provider = await onlineHttpProvider(net)
    sim.setFault(provider, 'refuse')
    const p = piece()
    expect(await sim.propose(proposal(provider, p.pieceCid, p.pieceSize, net.headEpoch()), { url, headers: {}, size: 1 })).toEqual({
      accepted: false,
      reason: 'BUSY',
    })
  })

  it('keeps its chain (deals and clock) across a restart when given a state file', async () => {
    const clock = { now: T0 }
    const file = join(dir, 'chain.sqlite')
    const a = createSimnet({ seed: 'sp', genesis: GENESIS, now: () => clock.now, speed: 100, stateFile: file })
    const provider = await onlineHttpProvider(a)
    const r = await a.proposeDeal(proposal(provider, piece().pieceCid, piece().pieceSize, a.headEpoch()))
    if (!r.accepted) throw new Error('refused')
    clock.now += 60_000
    const head = a.headEpoch()
    const before = await a.getDeal(r.dealId)
    await a.close()
    const b = createSimnet({ seed: 'sp', genesis: GENESIS, now: () => clock.now, speed: 100, stateFile: file })
    expect(b.headEpoch()).toBe(head)
    expect(await b.getDeal(r.dealId)).toEqual(before)
    await b.close()
  })

  it('shows one chain to two processes over one state file: deals one proposes, the other sees; demo deals never collide', async () => {
    const clock = { now: T0 }
    const file = join(dir, 'shared-chain.sqlite')
    const gatewaySide = createSimnet({ seed: 'sp', genesis: GENESIS, now: () => clock.now, speed: 100, stateFile: file })
    const serviceSide = createSimnet({ seed: 'sp', genesis: GENESIS, now: () => clock.now, speed: 100, stateFile: file })
    try {
      const client = (await serviceSide.lookupId('f1abjxfbp274xpdqcpuaykwkfb43omjotacm2p3za'))!
      await serviceSide.seedClientDeals(client, 5)
      const provider = await onlineHttpProvider(gatewaySide)
      const p = piece()
      const r = await gatewaySide.proposeDeal({ ...proposal(provider, p.pieceCid, p.pieceSize, gatewaySide.headEpoch()), Client: client })
      if (!r.accepted) throw new Error('refused')
      clock.now += 3_600_000
      expect(serviceSide.headEpoch()).toBe(gatewaySide.headEpoch())
      expect(await serviceSide.getDeal(r.dealId)).toEqual(await gatewaySide.getDeal(r.dealId))
      const ids: number[] = []
      for await (const d of serviceSide.dealsByClients([client])) ids.push(d.dealId)
      expect(ids).toContain(r.dealId)
      expect(new Set(ids).size).toBe(ids.length)
    } finally {
      await gatewaySide.close()
      await serviceSide.close()
    }
  })
})
