import { randomBytes } from 'node:crypto'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { boostProviderPort } from '../../../server/gateway/deals/index.ts'
import type { ProposalState, StorageProviderPort } from '../../../server/gateway/deals/market/provider-port.ts'
import type { ProviderClient } from '../../../server/network/boost/client.ts'
import { NetworkError } from '../../../server/network/errors.ts'
import type { DealProposal, NetworkPort } from '../../../server/network/types.ts'
import { piecePricePerEpoch } from '../../../server/shared/piece.ts'
import { CHAIN_FAILURES } from '../../../server/simulation/simnet/faults.ts'
import { GATEWAY_METHODS } from '../../../server/simulation/simnet/rpc-server.ts'
import { startDealStack, type DealStack } from './harness.ts'

/**
 * The deal engine held to what real providers and the chain do, where the
 * rule is the client's own: what it proposes (price for the piece, label,
 * deal type after FIP-0118), whom it asks (HTTP retrieval, padding limit),
 * how it reads a provider's status, and what it believes of the chain.
 */
let stack: DealStack | undefined
afterEach(async () => {
  await stack?.close()
  stack = undefined
})

const details = async (s: DealStack, path: string) => (await s.fileInfo(path)).result.file.details

async function upload(s: DealStack, path: string, size = 300_000): Promise<void> {
  expect((await s.put(path, randomBytes(size))).status).toBe(201)
  await s.seal()
}

/** Keeps every proposal the engine sends. */
function recording(sent: DealProposal[]) {
  return (port: StorageProviderPort): StorageProviderPort => ({
    ...port,
    propose: (proposal, transfer, options) => {
      sent.push(proposal)
      return port.propose(proposal, transfer, options)
    },
  })
}

describe('what the gateway proposes', () => {
  it('prices the piece, not the GiB: StoragePricePerEpoch is the price per GiB × PieceSize / 2^30, and the label is the payload root', async () => {
    const sent: DealProposal[] = []
    const s = (stack = await startDealStack({ copies: 2, price: '50000000', providers: recording(sent) }))
    await upload(s, '/paid.bin')
    await s.runUntil(() => sent.length > 0, { max: 5 })
    expect(sent.length).toBeGreaterThan(0)
    const dataRoot = await s.gateway.content.carRoot(1)
    for (const p of sent) {
      // boost cmd/boost/deal_cmd.go; providers check it the same way (storagemarket/deal_acceptance.go).
      expect(p.StoragePricePerEpoch).toBe(piecePricePerEpoch(50_000_000n, p.PieceSize).toString())
      expect(BigInt(p.StoragePricePerEpoch)).toBeLessThan(50_000_000n)
      expect(p.Label).toBe(dataRoot)
    }
  })

  it('proposes verified deals before network version 29 and unverified ones from it on (FIP-0118), needing no DataCap then', async () => {
    let version = 28
    const sent: DealProposal[] = []
    const s = (stack = await startDealStack({
      copies: 1,
      providers: (port) => ({
        ...recording(sent)(port),
        networkVersion: async () => version,
        // No DataCap at all: before nv29 this blocks every deal, from it on it does not matter.
        clientFunds: async (c) => ({ ...(await port.clientFunds(c)), dataCap: version >= 29 ? null : (await port.clientFunds(c)).dataCap }),
      }),
    }))
    await upload(s, '/one.bin')
    expect(await s.runUntil(() => sent.length > 0, { max: 5 })).toBe(true)
    expect(sent.every((p) => p.VerifiedDeal)).toBe(true)
    version = 29
    await upload(s, '/two.bin')
    expect(await s.runUntil(() => sent.some((p) => !p.VerifiedDeal), { max: 5 })).toBe(true)
    const market = s.gateway.deals!.standing().market!
    expect(market.kind).toMatchObject({ verified: false, networkVersion: 29 })
    expect(market.kind.note).toMatch(/FIP-0118/)
    expect(market.blocked).toBeUndefined()
    // The admin's link test reads the same from POST /status.
    const status = await (await fetch(`${s.gatewayServer.url}/status`, { method: 'POST' })).json()
    expect(status.result.deals).toMatchObject({ blocked: false, kind: { verified: false, networkVersion: 29 } })
    expect(status.result.deals.kind.note).toMatch(/^Fil\+ ended at network version 29/)
  })
})

describe('the network upgrade that ends Fil+ (FIP-0118), on the simulated chain', () => {
  it('verified deals before network version 29, unverified ones after, both reaching active on the chain', async () => {
    // The upgrade 2 days of chain time after the start: the first group's deals are made before it.
    const head = Math.floor((Date.UTC(2025, 0, 15) / 1000 - 1704067200) / 30)
    const s = (stack = await startDealStack({ copies: 1, nv29Epoch: head + 5760 }))
    await upload(s, '/before.bin')
    const active = async (group: number) => (await s.gateway.dealStore.ofGroup(group)).filter((d) => d.state === 'active')
    expect(await s.runUntil(async () => (await active(1)).length > 0)).toBe(true)
    expect((await s.simnet.getDeal((await active(1))[0].dealId!))!.proposal.VerifiedDeal).toBe(true)
    s.advance(head + 5760 - s.simnet.headEpoch())
    await upload(s, '/after.bin')
    expect(await s.runUntil(async () => (await active(2)).length > 0)).toBe(true)
    // The chain refuses verified deals from nv29: the gateway read the version and proposed an unverified one.
    expect((await s.simnet.getDeal((await active(2))[0].dealId!))!.proposal.VerifiedDeal).toBe(false)
    expect(s.gateway.deals!.standing().market!.kind).toMatchObject({ verified: false, networkVersion: 29 })
  })
})

describe('whom the gateway asks', () => {
  it('does not propose a paid deal whose price × duration the free escrow cannot cover, and says so', async () => {
    const sent: DealProposal[] = []
    // Some escrow, far less than a deal locks.
    const s = (stack = await startDealStack({ copies: 1, price: '50000000000', escrow: 1000n, providers: recording(sent) }))
    await upload(s, '/paid.bin')
    await s.runUntil(() => false, { max: 3 })
    expect(sent).toEqual([])
    expect((await details(s, '/paid.bin')).groups[0].reason).toMatch(/f0\d+: the deal would lock \d+ attoFIL of escrow, 1000 is free/)
  })

  it('skips a provider that serves no HTTP retrieval, and says why when no other is left', async () => {
    const sent: DealProposal[] = []
    const s = (stack = await startDealStack({
      copies: 1,
      providers: (port) => ({ ...recording(sent)(port), servesHttpRetrieval: async () => false }),
    }))
    await upload(s, '/no-http.bin')
    await s.runUntil(() => false, { max: 3 })
    expect(sent).toEqual([])
    expect((await details(s, '/no-http.bin')).groups[0].reason).toMatch(/NO_SUITABLE_PROVIDER: f0\d+ serves no HTTP retrieval/)
  })

  it('pads a small piece only within DEAL_MAX_PADDING, and says which providers want bigger pieces', async () => {
    const sent: DealProposal[] = []
    const s = (stack = await startDealStack({
      copies: 1,
      maxPaddingFactor: 4,
      // Every provider asks for pieces of at least 256 MiB, as many real ones do.
      providers: (port) => ({ ...recording(sent)(port), ask: async (p, o) => ({ ...(await port.ask(p, o))!, minPieceSize: 256 << 20 }) }),
    }))
    await upload(s, '/small.bin')
    await s.runUntil(() => false, { max: 3 })
    expect(sent).toEqual([])
    expect((await details(s, '/small.bin')).groups[0].reason).toMatch(
      /takes pieces of at least 268435456 bytes; this one is 524288 \(padding it ×512 is over DEAL_MAX_PADDING 4\)/,
    )
  })
})

describe('what the gateway believes', () => {
  it('never asks a provider again for a group when its proposal went unanswered: it may hold the deal already', async () => {
    const sent: DealProposal[] = []
    let silent: string | undefined
    let othersBusy = true
    const s = (stack = await startDealStack({
      copies: 1,
      providers: (port) => ({
        ...port,
        async propose(proposal, transfer, options) {
          sent.push(proposal)
          // The first provider asked reads the proposal and drops the stream (unanswered, as the client tells it).
          silent ??= proposal.Provider
          if (proposal.Provider === silent)
            throw new NetworkError('PROTOCOL_ERROR', 'the peer did not answer: stream reset', { unanswered: true })
          // The others refuse for a while, so the group stays short of its copy past the hour after which a
          // provider that failed it may be asked again.
          return othersBusy ? { accepted: false, reason: 'BUSY' } : port.propose(proposal, transfer, options)
        },
      }),
    }))
    await upload(s, '/quiet.bin')
    await s.runUntil(() => false, { max: 6, epochsPerTick: 240 })
    othersBusy = false
    expect(
      await s.runUntil(async () => (await s.gateway.dealStore.ofGroup(1)).some((d) => d.state === 'active'), { epochsPerTick: 240 }),
    ).toBe(true)
    expect(new Set(sent.map((p) => p.Provider)).size).toBeGreaterThan(1)
    expect(sent.filter((p) => p.Provider === silent)).toHaveLength(1)
    expect((await s.gateway.dealStore.ofGroup(1)).find((d) => d.provider === silent)!.failure?.code).toBe('PROPOSAL_UNANSWERED')
  })

  it('a deal counts only once the chain shows the piece, size, provider and client that were signed', async () => {
    let lie = true
    const s = (stack = await startDealStack({
      copies: 1,
      providers: (port) => ({
        ...port,
        async dealOnChain(dealId, head) {
          const real = await port.dealOnChain(dealId, head)
          // The provider reported a deal id whose deal on chain is for another piece.
          return real && lie
            ? {
                ...real,
                proposal: { ...real.proposal, PieceCID: { '/': 'baga6ea4seaqao7s73y24kcutaosvacpdjgfe5pw76ooefnyqw4ynr3d2y6x2mpq' } },
              }
            : real
        },
      }),
    }))
    await upload(s, '/trust.bin')
    const mismatched = async () => (await s.gateway.dealStore.ofGroup(1)).filter((d) => d.failure?.code === 'CHAIN_DEAL_MISMATCH')
    expect(await s.runUntil(async () => (await mismatched()).length > 0, { max: 20 })).toBe(true)
    expect((await mismatched())[0].failure?.detail).toMatch(
      /^deal \d+ on chain has piece baga6ea4seaqao7s73y24kcutaosvacpdjgfe5pw76ooefnyqw4ynr3d2y6x2mpq/,
    )
    expect((await s.gateway.dealStore.ofGroup(1)).some((d) => d.state === 'active')).toBe(false)
    lie = false
    expect(await s.runUntil(async () => (await s.gateway.dealStore.ofGroup(1)).some((d) => d.state === 'active'))).toBe(true)
  })

  it('an active deal the market no longer shows ended: slashed before its end epoch (the market removes terminated deals)', async () => {
    let gone = false
    const s = (stack = await startDealStack({
      copies: 1,
      providers: (port) => ({ ...port, dealOnChain: async (id, head) => (gone ? null : port.dealOnChain(id, head)) }),
    }))
    await upload(s, '/term.bin')
    expect(await s.runUntil(async () => (await s.gateway.dealStore.ofGroup(1)).some((d) => d.state === 'active'))).toBe(true)
    gone = true
    await s.runUntil(() => false, { max: 1 })
    const deal = (await s.gateway.dealStore.ofGroup(1)).find((d) => d.dealId !== undefined && d.state !== 'failed')!
    expect(deal).toMatchObject({ state: 'ended', failure: { code: 'SLASHED' } })
  })

  it('a proposal is lost only after the provider says three times, a poll apart, that it has no such deal', async () => {
    const answers: ProposalState['state'][] = []
    let say: ProposalState | undefined = { state: 'no-answer', reason: 'failed to fetch deal status' }
    const s = (stack = await startDealStack({
      copies: 1,
      providers: (port) => ({
        ...port,
        // The provider never published it: the market shows no deal of ours (else the chain would tell, chain-match.ts).
        dealOnChain: async () => null,
        async proposalState(provider, id, options) {
          const real = say ?? (await port.proposalState(provider, id, options))
          answers.push(real.state)
          return real
        },
      }),
    }))
    await upload(s, '/status.bin')
    const live = async () => (await s.gateway.dealStore.ofGroup(1)).filter((d) => d.state === 'proposed')
    await s.runUntil(async () => (await live()).length > 0, { max: 3 })
    // Transient errors: the deal stays proposed.
    await s.runUntil(() => false, { max: 3, epochsPerTick: 10 })
    expect(answers.filter((a) => a === 'no-answer').length).toBeGreaterThanOrEqual(2)
    expect(await live()).toHaveLength(1)
    // One and then two "no such deal": still proposed. The third: lost, and another provider is asked.
    say = { state: 'unknown' }
    await s.runUntil(() => false, { max: 2, epochsPerTick: 10 })
    expect(await live()).toHaveLength(1)
    await s.runUntil(() => false, { max: 1, epochsPerTick: 10 })
    const failed = (await s.gateway.dealStore.ofGroup(1)).filter((d) => d.state === 'failed')
    expect(failed.map((d) => d.failure)).toEqual([{ code: 'PROPOSAL_LOST' }])
  })

  it('asks a provider for a deal status no more often than every few minutes', async () => {
    let asked = 0
    const s = (stack = await startDealStack({
      copies: 1,
      providers: (port) => ({ ...port, proposalState: async () => (asked++, { state: 'transferring' }) }),
    }))
    await upload(s, '/poll.bin')
    await s.runUntil(async () => (await s.gateway.dealStore.ofGroup(1)).length > 0, { max: 3 })
    asked = 0
    // Ten passes one epoch (30 s) apart: 5 minutes, so at most two status requests.
    await s.runUntil(() => false, { max: 10, epochsPerTick: 1 })
    expect(asked).toBeGreaterThanOrEqual(1)
    expect(asked).toBeLessThanOrEqual(2)
  })
})

describe('a chain node that cannot answer for a while', () => {
  // The state methods, which a Lotus gateway's limiter prices highest (3 tokens, lotus gateway/node.go), fail;
  // ChainHead (2) still gets through, as it does on a public node that rate-limits its clients.
  const STATE_METHODS = [...GATEWAY_METHODS].filter((m) => m.startsWith('Filecoin.State'))
  let s: DealStack
  let watched: number | undefined
  let asked = 0
  beforeAll(async () => {
    s = await startDealStack({
      copies: 1,
      // A node that never answers: the proxy before it gives up (a 504) after a fifth of a second, long
      // before the gateway's own 10 s timeout (a client's own timeout is lotus.test.ts's).
      faults: { rate: 0, hangMs: 200 },
      providers: (port) => ({
        ...port,
        dealOnChain: (id, head) => (id === watched && asked++, port.dealOnChain(id, head)),
      }),
    })
    await upload(s, '/held.bin')
    const active = async () => (await s.gateway.dealStore.ofGroup(1)).find((d) => d.state === 'active')
    expect(await s.runUntil(async () => !!(await active()))).toBe(true)
    watched = (await active())!.dealId
  }, 120_000)
  afterAll(() => s?.close())

  it.each(CHAIN_FAILURES)(
    'an hour of chain time failing as %s: the active deal stays active, is asked again after a back-off, and followed once it answers',
    async (failure) => {
      s.holdChain(failure, STATE_METHODS)
      asked = 0
      // Twelve passes five minutes apart: an hour.
      await s.runUntil(() => false, { max: 12, epochsPerTick: 10 })
      s.holdChain(null)
      const during = asked
      // Asked again and again, but less often than every pass: the back-off doubles up to ten minutes.
      expect(during).toBeGreaterThanOrEqual(3)
      expect(during).toBeLessThan(12)
      const deal = (await s.gateway.dealStore.ofGroup(1)).find((d) => d.dealId === watched)!
      expect(deal).toMatchObject({ state: 'active' })
      expect(deal.failure).toBeUndefined()
      // The node answers again: the deal is asked about within the longest back-off, and is still active.
      await s.runUntil(() => false, { max: 3, epochsPerTick: 10 })
      expect(asked).toBeGreaterThan(during)
      expect((await s.gateway.dealStore.ofGroup(1)).find((d) => d.dealId === watched)).toMatchObject({ state: 'active' })
    },
    60_000,
  )
})

describe('a deal published while the node cannot tell whose address is whose', () => {
  it('is not failed as CHAIN_DEAL_MISMATCH when StateLookupID is busy: it waits, and counts once the node answers', async () => {
    const s = (stack = await startDealStack({ copies: 1 }))
    await upload(s, '/whose.bin')
    const deals = () => s.gateway.dealStore.ofGroup(1)
    // Proposing needs the client's ID address (its funds); following a proposal with its provider does not.
    expect(await s.runUntil(async () => (await deals()).some((d) => d.state === 'proposed'))).toBe(true)
    s.holdChain('busy', ['Filecoin.StateLookupID'])
    expect(await s.runUntil(async () => (await deals()).some((d) => d.state === 'published'))).toBe(true)
    await s.runUntil(() => false, { max: 4 })
    expect((await deals()).filter((d) => d.failure?.code === 'CHAIN_DEAL_MISMATCH')).toEqual([])
    expect((await deals()).some((d) => d.state === 'active')).toBe(false)
    s.holdChain(null)
    expect(await s.runUntil(async () => (await deals()).some((d) => d.state === 'active'))).toBe(true)
    expect((await deals()).filter((d) => d.failure?.code === 'CHAIN_DEAL_MISMATCH')).toEqual([])
  })
})

describe("the provider port reads Boost's deal status as Boost means it", () => {
  const port = (status: Awaited<ReturnType<ProviderClient['status']>>, chain: Partial<NetworkPort> = {}) =>
    boostProviderPort({
      chain: { clock: { epochSeconds: 30 }, ...chain } as NetworkPort,
      client: { status: async () => status } as unknown as ProviderClient,
    })
  const uuid = '0b7c0f4e-2b2a-4d61-9a55-8f6f3e2b1c00'
  const none = (error: string) => ({ dealUuid: uuid, error, status: null, transferSize: 0, bytesReceived: 0 })

  it('a null status with "no storage deal found" is a deal it does not know; any other error is its own trouble', async () => {
    // boost storagemarket/lp2pimpl/net.go getDealStatus: only ErrDealNotFound answers "no storage deal found with deal UUID …".
    expect(await port(none(`no storage deal found with deal UUID ${uuid}`)).proposalState('f01', uuid)).toEqual({ state: 'unknown' })
    for (const error of [
      'failed to fetch deal status',
      'getting sector status from sealer',
      'failed to get account key for client addr f0100',
    ]) {
      expect(await port(none(error)).proposalState('f01', uuid)).toEqual({ state: 'no-answer', reason: error })
    }
  })

  it('ChainDealID 0 with a publish message (Curio until sealing ends): the deal id comes from the message on chain', async () => {
    const proposal = { PieceCID: { '/': 'baga' } } as unknown as DealProposal
    const status = {
      dealUuid: uuid,
      error: '',
      transferSize: 10,
      bytesReceived: 10,
      status: {
        error: '',
        checkpoint: 'Accepted',
        sealingStatus: '',
        proposal,
        signedProposalCid: 'x',
        publishCid: 'bafy2bzacepublish',
        chainDealId: 0,
      },
    }
    const seen: string[] = []
    const chain = { publishedDealId: async (cid: string) => (seen.push(cid), 4242) }
    expect(await port(status, chain).proposalState('f01', uuid)).toEqual({ state: 'published', dealId: 4242 })
    expect(seen).toEqual(['bafy2bzacepublish'])
    expect(await port(status, { publishedDealId: async () => null }).proposalState('f01', uuid)).toEqual({ state: 'transferring' })
  })
})

describe('both kinds of provider', () => {
  it('Boost-like (TCP) and Curio-like (WebSocket) providers both take deals for one group, fetch it as each does, and pass retrieval checks', async () => {
    const s = (stack = await startDealStack({ copies: 4 }))
    await upload(s, '/mix.bin')
    const offloaded = async () => (await details(s, '/mix.bin')).state === 'offloaded'
    expect(await s.runUntil(offloaded)).toBe(true)
    const deals = (await details(s, '/mix.bin')).groups[0].deals as { provider: string; state: string; isRetrievable: boolean }[]
    const kinds = new Set(deals.filter((d) => d.state === 'active' && d.isRetrievable).map((d) => s.hosts.endpoints.get(d.provider)!.kind))
    expect([...kinds].sort()).toEqual(['boost', 'curio'])
  })
})
