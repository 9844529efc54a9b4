/**
 * The simulated chain over Lotus JSON-RPC: the one chain adapter
 * (server/network/lotus), pointed at it, must read exactly what the simulated
 * network holds, as it would read a Lotus node.
 */
import { devnetClock } from '../../server/network/index.ts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLotusNetwork, lotusNetworkParams } from '../../server/network/lotus/index.ts'
import { createJsonRpc } from '../../server/network/lotus/json-rpc.ts'
import { createSimnet, publishMessageCid } from '../../server/simulation/simnet/index.ts'
import { SIMNET_RPC_PATH, simnetRpcListener } from '../../server/simulation/simnet/rpc-server.ts'
import type { MarketDeal } from '../../server/network/types.ts'
import { startServer, type RunningServer } from '../../server/shared/http.ts'

const clock = { now: Date.UTC(2025, 0, 15) }
const simnet = createSimnet({ seed: 'rpc', genesis: 1704067200, now: () => clock.now, speed: 300 })
const CLIENT = 'f01306860'
let node: RunningServer
let dealId: number

beforeAll(async () => {
  node = await startServer(simnetRpcListener(simnet), 0, '127.0.0.1')
  await simnet.seedClientDeals(CLIENT, 25)
  let provider = ''
  for (const p of await simnet.listProviders()) if (!provider && (await simnet.providerTerms(p))?.online) provider = p
  const head = simnet.headEpoch()
  const proposed = await simnet.proposeDeal({
    PieceCID: { '/': 'baga6ea4seaqhfbebmrwupbasfztnnpzcefylrn5ewc6kmxnbjcx7fp4bbxgf6cq' },
    PieceSize: 2048,
    VerifiedDeal: true,
    Client: CLIENT,
    Provider: provider,
    Label: 'group-1',
    StartEpoch: head + 5760,
    EndEpoch: head + 5760 + 518_400,
    StoragePricePerEpoch: '0',
    ProviderCollateral: '0',
    ClientCollateral: '0',
  })
  if (!proposed.accepted) throw new Error(proposed.reason)
  dealId = proposed.dealId
  clock.now += 60_000 // the deal is published and maybe sealed by now
})
afterAll(() => node.close(100))

const lotus = () => createLotusNetwork({ url: `${node.url}${SIMNET_RPC_PATH}`, clock: simnet.clock })
const rpc = (body: string) =>
  fetch(`${node.url}${SIMNET_RPC_PATH}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })

describe('simulated chain over Lotus JSON-RPC', () => {
  it('serves only the gateway API by default (lotus api/api_gateway.go): no StateMarketDeals unless a full node is asked for', async () => {
    const call = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'Filecoin.StateMarketDeals', params: [null] })
    expect((await (await rpc(call)).json()).error.code).toBe(-32601)
    const full = await startServer(simnetRpcListener(simnet, { fullNode: true }), 0, '127.0.0.1')
    try {
      const res = await fetch(`${full.url}${SIMNET_RPC_PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: call,
      })
      expect(Object.keys((await res.json()).result)).toContain(String(dealId))
    } finally {
      await full.close(100)
    }
  })

  it("answers StateSearchMsg for a deal's PublishStorageDeals once published, and the adapter resolves the deal id from it", async () => {
    const publishCid = publishMessageCid(dealId)
    const proposal = (await simnet.getDeal(dealId))!.proposal
    expect(await lotus().publishedDealId(publishCid, proposal)).toBe(dealId)
    const raw = (
      await (
        await rpc(
          JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'Filecoin.StateSearchMsg', params: [null, { '/': publishCid }, -1, true] }),
        )
      ).json()
    ).result
    expect(raw).toMatchObject({
      Message: { '/': publishCid },
      Receipt: { ExitCode: 0 },
      ReturnDec: { IDs: [dealId] },
      Height: (await simnet.getDeal(dealId))!.publishedEpoch,
    })
    // Unknown message, and one not yet on chain: null, as Lotus answers.
    expect(await lotus().publishedDealId(publishMessageCid(1), proposal)).toBeNull()
    const late = await simnet.proposeDeal({ ...(await simnet.getDeal(dealId))!.proposal, StartEpoch: simnet.headEpoch() + 5760 })
    if (!late.accepted) throw new Error(late.reason)
    expect(await lotus().publishedDealId(late.publishCid, proposal)).toBeNull()
  })

  it("answers the network version (nv28) and Lotus's NetworkParams with no nv29 upgrade scheduled", async () => {
    expect(await lotus().networkVersion()).toBe(28)
    const params = (
      await (await rpc(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'Filecoin.StateGetNetworkParams', params: [] }))).json()
    ).result
    // Its block time is the simulated chain's own (sped up here), so a clock read from the node keeps its pace.
    expect(params).toMatchObject({
      NetworkName: 'simnet',
      BlockDelaySecs: simnet.clock.epochSeconds,
      ForkUpgradeParams: { UpgradeFireHorseHeight: -1, UpgradeXxHeight: 9_999_999_999 },
    })
    // A devnet's clock read from this node (NETWORK=devnet) is the simulated chain's, to the second.
    const read = await devnetClock({ url: `${node.url}${SIMNET_RPC_PATH}` })
    expect(read.epochSeconds).toBe(simnet.clock.epochSeconds)
    expect(Math.abs(read.genesis - simnet.clock.genesis)).toBeLessThan(1)
  })

  it('gives the chain adapter the same head, deals, actors and miners as the simulated network itself', async () => {
    const chain = lotus()
    expect(await chain.chainHead()).toEqual(await simnet.chainHead())
    expect(await chain.getDeal(dealId)).toEqual({ ...(await simnet.getDeal(dealId))!, publishedEpoch: -1 })
    expect(await chain.getDeal(1)).toBeNull()
    const direct: MarketDeal[] = []
    for await (const d of simnet.dealsByClients([CLIENT])) direct.push({ ...d, publishedEpoch: -1 })
    expect(direct.length).toBeGreaterThan(1)
    for (const d of direct) expect(await chain.getDeal(d.dealId)).toEqual(d)
    expect(await chain.nextDealId()).toBeGreaterThan(dealId)
    const provider = (await simnet.listProviders())[0]
    expect(await chain.minerInfo(provider)).toEqual(await simnet.minerInfo(provider))
    expect(await chain.minerInfo('f099999999')).toBeNull()
    expect(await chain.lookupId('f17uoq6tp427uzv7fztkbsnn64iwotfrristwpryy')).toBe(
      await simnet.lookupId('f17uoq6tp427uzv7fztkbsnn64iwotfrristwpryy'),
    )
    expect(await lotusNetworkParams(createJsonRpc({ url: `${node.url}${SIMNET_RPC_PATH}` }))).toEqual({
      networkName: 'simnet',
      blockDelaySecs: simnet.clock.epochSeconds,
    })
    // Every simulated client is verified with 1 PiB of DataCap and no escrow (StateVerifiedClientStatus, StateMarketBalance).
    expect(await chain.dataCap(CLIENT)).toBe(2n ** 50n)
    expect(await chain.marketBalance(CLIENT)).toEqual({ escrow: 0n, locked: 0n })
  })

  it('publishes a provider’s libp2p peer and addresses in StateMinerInfo, as base64 multiaddr bytes', async () => {
    const provider = (await simnet.listProviders())[1]
    simnet.publishPeer(provider, {
      peerId: '12D3KooWRawPbxPtP1eZaJpumGnyWX2DcUyd3RQnydr3eAto4Az7',
      multiaddrs: ['/ip4/127.0.0.1/tcp/43497'],
    })
    const raw = await (
      await rpc(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'Filecoin.StateMinerInfo', params: [provider, null] }))
    ).json()
    expect(raw.result.PeerId).toBe('12D3KooWRawPbxPtP1eZaJpumGnyWX2DcUyd3RQnydr3eAto4Az7')
    // /ip4 (0x04) 127.0.0.1, /tcp (0x06) 43497 (0xa9e9).
    expect(Buffer.from(raw.result.Multiaddrs[0], 'base64').toString('hex')).toBe('047f00000106a9e9')
    expect((await lotus().minerInfo(provider))?.multiaddrs).toEqual(['/ip4/127.0.0.1/tcp/43497'])
    simnet.publishPeer(provider, null)
  })

  it('answers bad calls with JSON-RPC errors, never a crash', async () => {
    expect((await (await rpc('{not json')).json()).error.code).toBe(-32700)
    expect((await (await rpc('[1, 2]')).json()).error.code).toBe(-32600)
    expect(
      (await (await rpc(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'Filecoin.WalletSign', params: [] }))).json()).error.code,
    ).toBe(-32601)
    expect((await (await rpc(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'toString', params: [] }))).json()).error.code).toBe(-32601)
    expect(
      (await (await rpc(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'Filecoin.StateLookupID', params: ['../../etc/passwd'] }))).json())
        .error.code,
    ).toBe(-32602)
    expect(
      (await (await rpc(JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'Filecoin.StateMarketStorageDeal', params: ['1'] }))).json()).error
        .code,
    ).toBe(-32602)
    expect((await (await rpc(JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'Filecoin.ChainHead', params: {} }))).json()).error.code).toBe(
      -32602,
    )
    expect((await rpc('x'.repeat(100_000))).status).toBe(413)
    expect((await fetch(`${node.url}${SIMNET_RPC_PATH}`)).status).toBe(405)
    expect((await fetch(`${node.url}/other`, { method: 'POST' })).status).toBe(404)
    // Still serving.
    expect(
      (await (await rpc(JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'Filecoin.ChainHead', params: [] }))).json()).result.Height,
    ).toBe(simnet.headEpoch())
  })
})
