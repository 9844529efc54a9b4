import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { dealStatus } from '../../server/network/deal-status.ts'
import { createLotusNetwork, lotusNetworkParams } from '../../server/network/lotus/index.ts'
import { createJsonRpc } from '../../server/network/lotus/json-rpc.ts'
import { NetworkUnavailableError, type MarketDeal } from '../../server/network/types.ts'
import { networkClock } from '../../server/shared/epochs.ts'
import { startServer, type RunningServer } from '../../server/shared/http.ts'

/** Recorded Lotus JSON-RPC results, keyed by method (and first parameter where it matters). */
const recorded = JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', 'lotus-responses.json'), 'utf8')) as Record<string, unknown>
const TOKEN = 'lotus-read-token'
let node: RunningServer
const seen: { method: string; params: unknown[]; auth?: string }[] = []

beforeAll(async () => {
  node = await startServer((req, res) => {
    let body = ''
    req.on('data', (c) => (body += c))
    req.on('end', () => {
      const { id, method, params } = JSON.parse(body)
      seen.push({ method, params, auth: req.headers.authorization })
      const result = recorded[`${method}:${params[0]}`] ?? recorded[method]
      const reply = result === undefined
        ? { jsonrpc: '2.0', id, error: { code: 1, message: `resolution lookup failed (${params[0]}): actor not found` } }
        : { jsonrpc: '2.0', id, result }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply))
    })
  }, 0)
})
afterAll(() => node.close(100))

const lotus = () => createLotusNetwork({ url: `${node.url}/rpc/v1`, token: TOKEN, clock: networkClock('mainnet') })

describe('Lotus JSON-RPC adapter', () => {
  it('reads the chain head height and sends the bearer token', async () => {
    const head = await lotus().chainHead()
    expect(head.epoch).toBe(4622880)
    expect(head.timestamp).toBe(1598306400 + 4622880 * 30)
    expect(seen.at(-1)).toMatchObject({ method: 'Filecoin.ChainHead', auth: `Bearer ${TOKEN}` })
  })

  it('reads one market deal; a deal in a sector is active before its end', async () => {
    const deal = (await lotus().getDeal(85341234))!
    expect(deal.proposal.Provider).toBe('f02182')
    expect(deal.state.SectorStartEpoch).toBe(4588211)
    expect(dealStatus(deal, 4622880)).toEqual({ status: 'active', publishedEpoch: -1, onChainStartEpoch: 4588211, onChainEndEpoch: -1 })
  })

  it('lists a client\'s deals from StateMarketDeals in id order, with statuses from chain state', async () => {
    const deals: MarketDeal[] = []
    for await (const d of lotus().dealsByClients(['f01306860'])) deals.push(d)
    expect(deals.map((d) => d.dealId)).toEqual([77000002, 85341234, 85341301, 85341302])
    const head = 4622880
    expect(deals.map((d) => dealStatus(d, head).status)).toEqual(['expired', 'active', 'published', 'published-expired'])
    // A CBOR-map label (newer Lotus) becomes an empty string rather than an object.
    expect(deals[3].proposal.Label).toBe('')
  })

  it('reports a slashed deal with its slash epoch as the end', async () => {
    const all = recorded['Filecoin.StateMarketDeals'] as Record<string, { Proposal: never; State: never }>
    const raw = all['77000001']
    const d: MarketDeal = { dealId: 77000001, proposal: raw.Proposal, state: raw.State, publishedEpoch: -1 }
    expect(dealStatus(d, 4622880)).toMatchObject({ status: 'slashed', onChainEndEpoch: 4200000 })
  })

  it('resolves robust addresses with StateLookupID, and answers null for unknown actors', async () => {
    expect(await lotus().lookupId('f17uoq6tp427uzv7fztkbsnn64iwotfrristwpryy')).toBe('f01306860')
    expect(await lotus().lookupId('f24vg6ut43yw2h2jqydgbg2xq7x6f4kub3bg6as6i')).toBeNull()
    expect(await lotus().lookupId('not-an-address')).toBeNull()
  })

  it('reads miner info; a non-miner is null (NOT_FOUND_ON_CHAIN upstream)', async () => {
    expect(await lotus().minerInfo('f02182')).toEqual({
      id: 'f02182', owner: 'f0115238', worker: 'f0143858', peerId: '12D3KooWHAABU9s6fTQt3wHzZB5xsxhP3Ss7AXhGjjavRSfbAMu1', multiaddrs: [], sectorSize: 34359738368,
    })
    expect(await lotus().minerInfo('f099999999')).toBeNull()
  })

  it('reads the network parameters', async () => {
    const call = createJsonRpc({ url: `${node.url}/rpc/v1` })
    expect(await lotusNetworkParams(call)).toEqual({ networkName: 'mainnet', blockDelaySecs: 30 })
  })

  it('knows no provider terms (they are not on chain)', async () => {
    expect(await lotus().providerTerms('f02182')).toBeNull()
  })

  it('an unreachable node is a NetworkUnavailableError, not a "not found"', async () => {
    const down = createLotusNetwork({ url: 'http://127.0.0.1:1/rpc/v1', clock: networkClock('mainnet') })
    await expect(down.chainHead()).rejects.toBeInstanceOf(NetworkUnavailableError)
    await expect(down.minerInfo('f02182')).rejects.toBeInstanceOf(NetworkUnavailableError)
  })
})
