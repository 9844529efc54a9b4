import * as dagCbor from '@ipld/dag-cbor'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { proposalTuple } from '../../server/network/boost/wire.ts'
import { dealStatus } from '../../server/network/deal-status.ts'
import { createLotusNetwork, lotusNetworkParams } from '../../server/network/lotus/index.ts'
import { createJsonRpc } from '../../server/network/lotus/json-rpc.ts'
import { BitfieldError, decodeRlePlus } from '../../server/network/lotus/bitfield.ts'
import { type DealProposal, type MarketDeal } from '../../server/network/types.ts'
import { networkClock } from '../../server/shared/epochs.ts'
import { startServer, type RunningServer } from '../../server/shared/http.ts'

/** Recorded Lotus JSON-RPC results, keyed by method (and first parameter where it matters). */
const recorded = JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', 'lotus-responses.json'), 'utf8')) as Record<string, unknown>
const recordedDeal = recorded['Filecoin.StateMarketStorageDeal:85341234'] as { Proposal: DealProposal }
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
      const reply =
        result === undefined
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

  it("reads NextID from the market actor's state and the network version, with gateway methods only", async () => {
    recorded['Filecoin.StateReadState:f05'] = {
      Balance: '0',
      Code: { '/': 'bafk2bzacemarket' },
      State: { NextID: 85341303, LastCron: 4622879 },
    }
    recorded['Filecoin.StateNetworkVersion'] = 28
    expect(await lotus().nextDealId()).toBe(85341303)
    expect(await lotus().networkVersion()).toBe(28)
    expect(seen.map((s) => s.method)).not.toContain('Filecoin.StateMarketDeals')
  })

  it("resolves a deal id from its PublishStorageDeals message: our proposal's place in the batch, among the valid ones", async () => {
    // A batch of three proposals of which the second was invalid: IDs [85341301, 85341302], ValidDeals {0, 2}.
    // RLE+ of {0, 2}: version 00, first run of ones, runs 1 1 1 coded "1" "1" "1": bits 0 0 1 1 1 1 = 0x3c.
    // CBOR: 0x82 [ 0x82 [ 0x1a 05 16 34 75, 0x1a 05 16 34 76 ], 0x41 3c ].
    const ret = Buffer.from('82821a051634751a05163476413c', 'hex').toString('base64')
    const proposals = [1, 2, 3].map((n) => ({ ...recordedDeal.Proposal, PieceSize: 2 ** 30, StartEpoch: 4_700_000 + n }))
    // PublishStorageDealsParams: [[ClientDealProposal…]], each [proposal tuple, signature] (go-state-types builtin/v9/market).
    const params = dagCbor.encode([proposals.map((p) => [proposalTuple(p), Uint8Array.of(1, ...new Uint8Array(65))])])
    recorded['Filecoin.StateSearchMsg'] = {
      Message: { '/': 'bafy2bzacepublish' },
      Receipt: { ExitCode: 0, Return: ret, GasUsed: 1 },
      ReturnDec: null,
      TipSet: [],
      Height: 4622800,
    }
    recorded['Filecoin.ChainGetMessage'] = {
      Version: 0,
      To: 'f05',
      From: 'f02182',
      Method: 4,
      Params: Buffer.from(params).toString('base64'),
    }
    expect(await lotus().publishedDealId('bafy2bzacepublish', proposals[0])).toBe(85341301)
    expect(await lotus().publishedDealId('bafy2bzacepublish', proposals[2])).toBe(85341302)
    // The invalid one, and one the message does not publish at all.
    await expect(lotus().publishedDealId('bafy2bzacepublish', proposals[1])).rejects.toMatchObject({
      code: 'REJECTED_BY_CHAIN',
      messageCid: 'bafy2bzacepublish',
    })
    await expect(lotus().publishedDealId('bafy2bzacepublish', { ...proposals[0], StartEpoch: 1 })).rejects.toMatchObject({
      code: 'REJECTED_BY_CHAIN',
      messageCid: 'bafy2bzacepublish',
    })
    recorded['Filecoin.StateSearchMsg'] = {
      ...(recorded['Filecoin.StateSearchMsg'] as object),
      Receipt: { ExitCode: 16, Return: null, GasUsed: 1 },
    }
    await expect(lotus().publishedDealId('bafy2bzacepublish', proposals[0])).rejects.toMatchObject({
      code: 'REJECTED_BY_CHAIN',
      exitCode: 16,
    })
    recorded['Filecoin.StateSearchMsg'] = null
    expect(await lotus().publishedDealId('bafy2bzacepublish', proposals[0])).toBeNull()
    delete recorded['Filecoin.StateSearchMsg']
    delete recorded['Filecoin.ChainGetMessage']
  })

  it('decodes RLE+ bitfields as go-bitfield does (its reference vector from the Rust implementation)', () => {
    // go-bitfield rle/rleplus_test.go TestDecode: [124, 71, 34, 2] is {0, 2, 4, 5, 6, 11..27}.
    expect(decodeRlePlus(Uint8Array.from([124, 71, 34, 2]))).toEqual([0, 2, 4, 5, 6, ...Array.from({ length: 17 }, (_, i) => 11 + i)])
    expect(decodeRlePlus(new Uint8Array(0))).toEqual([])
    // Version 00, first run of zeros, "01" + 4 bits: 3 zeros, "1": one set bit -> {3}; bits 0000111001 = [112, 2].
    expect(decodeRlePlus(Uint8Array.from([112, 2]))).toEqual([3])
    expect(() => decodeRlePlus(Uint8Array.from([0x01]))).toThrow(BitfieldError)
    // "01" announces 4 bits of run length that are not there.
    expect(() => decodeRlePlus(Uint8Array.from([16]))).toThrow(BitfieldError)
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
      id: 'f02182',
      owner: 'f0115238',
      worker: 'f0143858',
      peerId: '12D3KooWHAABU9s6fTQt3wHzZB5xsxhP3Ss7AXhGjjavRSfbAMu1',
      multiaddrs: [],
      sectorSize: 34359738368,
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

  it('an unreachable node is UNREACHABLE, not a "not found"', async () => {
    const down = createLotusNetwork({ url: 'http://127.0.0.1:1/rpc/v1', clock: networkClock('mainnet') })
    await expect(down.chainHead()).rejects.toMatchObject({ name: 'NetworkError', code: 'UNREACHABLE' })
    await expect(down.minerInfo('f02182')).rejects.toMatchObject({ name: 'NetworkError', code: 'UNREACHABLE' })
  })

  it('an error the node answers is REJECTED_BY_CHAIN with its code; a slow node is TIMED_OUT; a reply that is not JSON-RPC, PROTOCOL_ERROR', async () => {
    const answering =
      (body: string): typeof fetch =>
      async () =>
        new Response(body, { status: 200 })
    const rpc = (f: typeof fetch, timeoutMs?: number) => createJsonRpc({ url: 'http://node.invalid/rpc/v1', fetch: f, timeoutMs })
    await expect(
      rpc(answering(JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: 1, message: 'actor not found' } })))(
        'Filecoin.StateLookupID',
        [],
      ),
    ).rejects.toMatchObject({ code: 'REJECTED_BY_CHAIN', rpcCode: 1, message: 'actor not found' })
    await expect(rpc(answering('<html>'))('Filecoin.ChainHead', [])).rejects.toMatchObject({ code: 'PROTOCOL_ERROR' })
    const slow: typeof fetch = (_url, init) =>
      new Promise((_resolve, reject) => init!.signal!.addEventListener('abort', () => reject(init!.signal!.reason)))
    await expect(rpc(slow, 50)('Filecoin.ChainHead', [])).rejects.toMatchObject({ code: 'TIMED_OUT' })
  })
})

/**
 * What a node, or the proxy before it, answers when it cannot or will not serve a call, as recorded in
 * fixtures/lotus-errors.json: only the node's own "not found" means absent; every other answer is an
 * error the caller retries later, never a "no".
 */
describe('Lotus JSON-RPC adapter: "not found" and the errors that are not', () => {
  type Shape = { status: number; headers: Record<string, string>; body: string }
  const shapes = JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', 'lotus-errors.json'), 'utf8')) as Record<string, Shape>
  /** A node that answers every call with `shape`, counting the calls. */
  const answering = (shape: Shape, calls = { n: 0 }): typeof fetch =>
    (async () => (calls.n++, new Response(shape.body || null, { status: shape.status, headers: shape.headers }))) as typeof fetch
  const node = (f: typeof fetch, timeoutMs?: number) =>
    createLotusNetwork({
      url: 'http://node.invalid/rpc/v1',
      clock: networkClock('mainnet'),
      fetch: f,
      timeoutMs,
      busyRetry: { retries: 2, firstMs: 1, maxMs: 5 },
    })
  const transient = [
    ['busy.lotusGateway', 'BUSY'],
    ['connectionLimited.lotusGateway', 'BUSY'],
    ['rateLimited.lotusGateway', 'BUSY'],
    ['unavailable.nginx', 'BUSY'],
    ['badGateway.nginx', 'UNREACHABLE'],
    ['gatewayTimeout.nginx', 'UNREACHABLE'],
    ['unknown.blockstore', 'REJECTED_BY_CHAIN'],
    ['methodNotFound.goJsonrpc', 'REJECTED_BY_CHAIN'],
  ] as const

  it("a deal the market does not hold is null on the node's own answer, from Lotus (code 1) and from Forest (-32603)", async () => {
    // lotus chain/stmgr/actors.go GetStorageDeal, sent by go-jsonrpc with code 1; Forest words it alike.
    expect(JSON.parse(shapes['notFound.lotus'].body).error).toEqual({
      code: 1,
      message:
        'deal 85341999 not found - deal may not have completed sealing before deal proposal start epoch, or deal may have been slashed',
    })
    expect(await node(answering(shapes['notFound.lotus'])).getDeal(85341999)).toBeNull()
    expect(await node(answering(shapes['notFound.forest'])).getDeal(85341999)).toBeNull()
    // The same words about another deal id are not an answer about this one.
    await expect(node(answering(shapes['notFound.lotus'])).getDeal(85341998)).rejects.toMatchObject({ code: 'REJECTED_BY_CHAIN' })
    // StateLookupID's ErrActorNotFound (lotus api/api_errors.go, code 11): the address has no actor.
    expect(await node(answering(shapes['actorNotFound.lotus'])).lookupId('f17uoq6tp427uzv7fztkbsnn64iwotfrristwpryy')).toBeNull()
  })

  it.each(transient)('%s is thrown as %s by every read that answers null for "not found", never read as absent', async (name, code) => {
    const lotus = node(answering(shapes[name]))
    await expect(lotus.getDeal(85341999)).rejects.toMatchObject({ name: 'NetworkError', code })
    await expect(lotus.lookupId('f17uoq6tp427uzv7fztkbsnn64iwotfrristwpryy')).rejects.toMatchObject({ code })
    await expect(lotus.minerInfo('f02182')).rejects.toMatchObject({ code })
  })

  it('keeps what the node said: its HTTP status, its JSON-RPC code and words', async () => {
    await expect(node(answering(shapes['rateLimited.lotusGateway'])).chainHead()).rejects.toMatchObject({ code: 'BUSY', httpStatus: 429 })
    await expect(node(answering(shapes['busy.lotusGateway'])).chainHead()).rejects.toMatchObject({
      code: 'BUSY',
      rpcCode: 1,
      message: 'server busy. rate: Wait(n=3) would exceed context deadline',
    })
    await expect(node(answering(shapes['badGateway.nginx'])).chainHead()).rejects.toMatchObject({ code: 'UNREACHABLE', httpStatus: 502 })
    // go-jsonrpc answers its own protocol errors with HTTP 500 and a JSON-RPC error: the node's answer, not an outage.
    await expect(node(answering(shapes['methodNotFound.goJsonrpc'])).chainHead()).rejects.toMatchObject({
      code: 'REJECTED_BY_CHAIN',
      rpcCode: -32601,
      httpStatus: 500,
    })
  })

  it('sends a call a busy node refused again after a back-off that honours its Retry-After, then gives up as BUSY', async () => {
    const calls = { n: 0 }
    await expect(node(answering(shapes['busy.lotusGateway'], calls)).getDeal(1)).rejects.toMatchObject({ code: 'BUSY' })
    expect(calls.n).toBe(3)
    // A node that refuses once and then answers: the caller sees only the answer.
    let refusals = 1
    const once: typeof fetch = async (url, init) =>
      refusals-- > 0 ? answering(shapes['unavailable.retryAfter'])(url, init) : answering(shapes['notFound.lotus'])(url, init)
    const started = Date.now()
    const lotus = createLotusNetwork({
      url: 'http://node.invalid/rpc/v1',
      clock: networkClock('mainnet'),
      fetch: once,
      busyRetry: { retries: 2, firstMs: 1, maxMs: 3_000 },
    })
    expect(await lotus.getDeal(85341999)).toBeNull()
    // Retry-After: 2 (seconds), within the longest wait allowed.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_900)
    // A timeout or an outage is not sent again here: the call may have been made, and the caller paces its own retries.
    const outage = { n: 0 }
    await expect(node(answering(shapes['badGateway.nginx'], outage)).getDeal(1)).rejects.toMatchObject({ code: 'UNREACHABLE' })
    expect(outage.n).toBe(1)
  })

  it('a node that does not answer in time is TIMED_OUT, for a deal as for anything else', async () => {
    const silent: typeof fetch = (_url, init) =>
      new Promise((_resolve, reject) => init!.signal!.addEventListener('abort', () => reject(init!.signal!.reason)))
    await expect(node(silent, 50).getDeal(85341999)).rejects.toMatchObject({ code: 'TIMED_OUT' })
  })
})
