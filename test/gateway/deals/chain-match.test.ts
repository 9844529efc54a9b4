import pino from 'pino'
import { describe, expect, it } from 'vitest'
import { createChainMatcher } from '../../../server/gateway/deals/market/chain-match.ts'
import type { StorageProviderPort } from '../../../server/gateway/deals/market/provider-port.ts'
import type { MarketRouteOptions } from '../../../server/gateway/deals/market/types.ts'
import type { GroupDeal, RouteContext } from '../../../server/gateway/deals/types.ts'
import { NetworkError } from '../../../server/network/errors.ts'
import type { DealProposal } from '../../../server/network/types.ts'

/**
 * The market's new deals matched to the proposals the gateway made, from the chain alone
 * (chain-match.ts): what a provider such as Curio does not tell.
 */
const CLIENT = 'f1clientaddressaaaaaaaaaaaaaaaaaaaaaaaaaa'
const ROOT = 'bafyroot'

const proposal = (d: GroupDeal, over: Partial<DealProposal> = {}): DealProposal => ({
  PieceCID: { '/': d.pieceCid },
  PieceSize: 1 << 20,
  VerifiedDeal: false,
  Client: 'f0100',
  Provider: d.provider,
  Label: ROOT,
  StartEpoch: d.startEpoch,
  EndEpoch: d.endEpoch,
  StoragePricePerEpoch: '0',
  ProviderCollateral: '0',
  ClientCollateral: '0',
  ...over,
})

const deal = (id: number, provider: string): GroupDeal => ({
  id,
  groupId: 1,
  route: 'market',
  provider,
  pieceCid: 'baga6ea4seaqpiece',
  state: 'proposed',
  proposalId: `uuid-${id}`,
  startEpoch: 5000,
  endEpoch: 5000 + 518400,
  retrievable: false,
  transferSize: ((1 << 20) * 127) / 128,
  createdMs: 0,
  updatedMs: 0,
})

/** A chain whose market holds `onChain` (deal id → proposal) below `next`; `busy` ids fail as a busy node. */
function matcherOver(onChain: Map<number, DealProposal>, next: number, busy = new Set<number>()) {
  const asked: number[] = []
  const providers = {
    nextDealId: async () => next,
    async dealOnChain(id: number) {
      asked.push(id)
      if (busy.has(id)) throw new NetworkError('BUSY', 'server busy. rate: Wait(n=3) would exceed context deadline')
      const p = onChain.get(id)
      return p ? { status: 'published', publishedEpoch: -1, onChainStartEpoch: -1, onChainEndEpoch: -1, slashEpoch: -1, proposal: p } : null
    },
  } as unknown as StorageProviderPort
  const c = { logger: pino({ level: 'silent' }), content: { carRoot: async () => ROOT } } as unknown as RouteContext
  const o = { providers, clientAddress: CLIENT } as unknown as MarketRouteOptions
  return { matcher: createChainMatcher(c, o), asked }
}

describe("the market's new deals matched to our proposals", () => {
  it('takes only the deal with our piece, size, provider, client, label and epochs, each for one proposal', async () => {
    const a = deal(1, 'f01001')
    const b = deal(2, 'f01002')
    const chain = new Map<number, DealProposal>([
      [10, proposal(a, { Label: 'bafysomeoneelse' })],
      [11, proposal(a, { Client: 'f0999' })],
      [12, proposal(a, { PieceSize: 2 << 20 })],
      [13, proposal(a, { StartEpoch: 4999 })],
      [14, proposal(b, { Provider: 'f01003' })],
      [15, proposal(a)],
      [16, proposal(b, { Client: 't0100' })],
    ])
    const { matcher } = matcherOver(chain, 17)
    const walked = await matcher.walk([a, b], 100, async () => 'f0100')
    expect(walked).toEqual({
      matched: new Map([
        [1, 15],
        [2, 16],
      ]),
      complete: true,
    })
  })

  it('stops where the chain stopped answering, keeps what it matched, and reads on from there the next pass', async () => {
    const a = deal(1, 'f01001')
    const b = deal(2, 'f01002')
    const busy = new Set([21])
    const { matcher, asked } = matcherOver(
      new Map([
        [20, proposal(a)],
        [22, proposal(b)],
      ]),
      23,
      busy,
    )
    expect(await matcher.walk([a, b], 100, async () => 'f0100')).toEqual({ matched: new Map([[1, 20]]), complete: false })
    busy.clear()
    expect(await matcher.walk([b], 100, async () => 'f0100')).toEqual({ matched: new Map([[2, 22]]), complete: true })
    expect(asked).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 21, 22])
  })

  it("is incomplete, so nothing is given up on, while the client's ID address cannot be looked up", async () => {
    const a = deal(1, 'f01001')
    const { matcher } = matcherOver(new Map([[0, proposal(a)]]), 1)
    const busy = async () => Promise.reject(new NetworkError('BUSY', 'Lotus node answered HTTP 429 to Filecoin.StateLookupID'))
    expect(await matcher.walk([a], 100, busy)).toEqual({ matched: new Map(), complete: false })
    expect(await matcher.walk([a], 100, async () => 'f0100')).toEqual({ matched: new Map([[1, 0]]), complete: true })
  })
})
