import { mkdtempSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { multiaddr } from '@multiformats/multiaddr'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chainDirectory, createProviderClient, type ProviderClient } from '../../server/network/boost/client.ts'
import { createHost, serve, type Libp2p } from '../../server/network/boost/libp2p.ts'
import { decodeDealParams, decodeDealResponse, decodeDealStatusResponse, encodeDealResponse, uuidBytes } from '../../server/network/boost/wire.ts'
import * as dagCbor from '@ipld/dag-cbor'
import { createSimnet, simulatedCollateralBounds, type Simnet } from '../../server/network/simnet/index.ts'
import { startProviderHosts, type ProviderHosts } from '../../server/network/simnet/provider-hosts.ts'
import { createSimulatedProviders, type SimulatedProviders } from '../../server/network/simnet/sim-providers.ts'
import type { DealProposal } from '../../server/network/types.ts'
import { createSigner, newPrivateKey } from '../../server/network/wallet/keys.ts'

const GENESIS = 1704067200
const T0 = Date.UTC(2025, 0, 15)

let dir: string
let simnet: Simnet
let sim: SimulatedProviders
let hosts: ProviderHosts
let client: ProviderClient
let provider: string
const signer = createSigner(newPrivateKey(), 'mainnet')

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'provider-hosts-'))
  simnet = createSimnet({ seed: 'provider-hosts', genesis: GENESIS, now: () => T0, providerCount: 4 })
  sim = createSimulatedProviders({ simnet, dir })
  hosts = await startProviderHosts({ simnet, providers: sim, seed: 'provider-hosts' })
  client = await createProviderClient({ directory: chainDirectory(simnet), signer, network: 'mainnet' })
  for (const p of await simnet.listProviders()) {
    const t = (await simnet.providerTerms(p))!
    if (t.online && t.transferTypes.includes('http')) provider = p
  }
})
afterAll(async () => {
  await client?.close()
  await hosts?.close()
  await sim?.close()
  rmSync(dir, { recursive: true, force: true })
})

const proposal = (p: Partial<DealProposal> = {}): DealProposal => ({
  PieceCID: { '/': 'baga6ea4seaqao7s73y24kcutaosvacpdjgfe5pw76ooefnyqw4ynr3d2y6x2mpq' }, PieceSize: 1 << 20, VerifiedDeal: true,
  Client: signer.address, Provider: provider, Label: '', StartEpoch: simnet.headEpoch() + 5760, EndEpoch: simnet.headEpoch() + 5760 + 518_400,
  StoragePricePerEpoch: '0', ProviderCollateral: simulatedCollateralBounds(1 << 20, true).min.toString(), ClientCollateral: '0', ...p,
})
const transfer = { url: 'http://127.0.0.1:9/none', headers: {}, size: 100, clientId: 'x' }
const signal = () => AbortSignal.timeout(5000)

/** One multistream-select message: varint length, then the text and a newline. */
const frame = (text: string) => {
  const body = Buffer.from(`${text}\n`)
  return Buffer.concat([Buffer.from([body.length]), body])
}

describe('simulated providers on the wire', () => {
  it('each provider publishes its peer id and a loopback TCP multiaddr in its miner info', async () => {
    const info = (await simnet.minerInfo(provider))!
    expect(info.peerId).toMatch(/^12D3KooW/)
    expect(info.multiaddrs[0]).toMatch(/^\/ip4\/127\.0\.0\.1\/tcp\/\d+$/)
    expect(hosts.endpoints.get(provider)?.peerId).toBe(info.peerId)
  })

  it('speaks multistream-select on its TCP port, negotiated by hand, and offers noise', async () => {
    const { port, host } = multiaddr((await simnet.minerInfo(provider))!.multiaddrs[0]).toOptions()
    const socket = connect(port, host)
    const received: Buffer[] = []
    socket.on('data', (d) => received.push(d))
    await new Promise((r) => socket.once('connect', r))
    socket.write(frame('/multistream/1.0.0'))
    socket.write(frame('/noise'))
    const deadline = Date.now() + 5000
    const want = Buffer.concat([frame('/multistream/1.0.0'), frame('/noise')])
    while (Buffer.concat(received).length < want.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    socket.destroy()
    // The provider echoes the multistream header, then accepts /noise: a libp2p listener, not a mock.
    expect(Buffer.concat(received).subarray(0, want.length).toString()).toBe(want.toString())
  })

  it('answers the ask protocol with its terms', async () => {
    const terms = (await simnet.providerTerms(provider))!
    const ask = await client.ask(provider, signal())
    expect(ask).toMatchObject({ miner: provider, minPieceSize: terms.minPieceSize, maxPieceSize: terms.maxPieceSize, verifiedPrice: terms.verifiedPrice })
  })

  it('takes a signed proposal (mk/1.2.1), and refuses one whose signature is not the client’s', async () => {
    const ok = await client.propose({ dealUuid: crypto.randomUUID(), proposal: proposal(), dataRoot: 'bafkqaaa', transfer, removeUnsealedCopy: false, skipIpniAnnounce: false }, signal())
    expect(ok).toMatchObject({ accepted: true, protocol: '/fil/storage/mk/1.2.1' })
    const other = createSigner(newPrivateKey(), 'mainnet')
    const forged = await createProviderClient({ directory: chainDirectory(simnet), signer: other, network: 'mainnet' })
    try {
      // The proposal names our client but is signed by another key.
      await expect(forged.propose({ dealUuid: crypto.randomUUID(), proposal: proposal(), dataRoot: 'bafkqaaa', transfer, removeUnsealedCopy: false, skipIpniAnnounce: false }, signal())).rejects.toThrow(/wallet key/)
    } finally {
      await forged.close()
    }
  })

  it('refuses a proposal whose provider collateral is below the market’s minimum, as Boost does', async () => {
    const answer = await client.propose({ dealUuid: crypto.randomUUID(), proposal: proposal({ ProviderCollateral: '0' }), dataRoot: 'bafkqaaa', transfer, removeUnsealedCopy: false, skipIpniAnnounce: false }, signal())
    expect(answer.accepted).toBe(false)
    expect(answer.message).toMatch(/provider collateral 0 should be between \d+ and \d+/)
  })

  it('tells the deal status only to the client that proposed it', async () => {
    const dealUuid = crypto.randomUUID()
    await client.propose({ dealUuid, proposal: proposal(), dataRoot: 'bafkqaaa', transfer, removeUnsealedCopy: false, skipIpniAnnounce: false }, signal())
    const status = await client.status(provider, dealUuid, signal())
    expect(status.dealUuid).toBe(dealUuid)
    expect(status.status?.proposal.Client).toBe(signer.address)
    const stranger = await createProviderClient({ directory: chainDirectory(simnet), signer: createSigner(newPrivateKey(), 'mainnet'), network: 'mainnet' })
    try {
      const refused = await stranger.status(provider, dealUuid, signal())
      expect(refused).toMatchObject({ error: 'invalid signature', status: null })
    } finally {
      await stranger.close()
    }
    expect((await client.status(provider, crypto.randomUUID(), signal())).status).toBeNull()
    expect(uuidBytes(dealUuid)).toHaveLength(16)
  })

  it('names its HTTP retrieval endpoint, which answers 400 for a bad CID and 404 for a piece it does not hold', async () => {
    const base = await client.retrievalUrl(provider, signal())
    expect(base).toBe(hosts.endpoints.get(provider)!.httpUrl)
    expect((await fetch(`${base}/ipfs/not-a-cid`, { headers: { Accept: 'application/vnd.ipld.raw' } })).status).toBe(400)
    expect((await fetch(`${base}/piece/baga6ea4seaqao7s73y24kcutaosvacpdjgfe5pw76ooefnyqw4ynr3d2y6x2mpq`)).status).toBe(404)
    expect((await fetch(`${base}/ipfs/bafkqaaa`)).status).toBe(406)
  })
})

describe('a simulated provider under hostile input', () => {
  let rogue: Libp2p
  beforeAll(async () => {
    rogue = await createHost()
  })
  afterAll(async () => {
    await rogue?.stop()
  })
  const target = async () => {
    const info = (await simnet.minerInfo(provider))!
    return multiaddr(`${info.multiaddrs[0]}/p2p/${info.peerId}`)
  }
  /** Sends raw bytes on a protocol and returns whatever comes back before the stream ends. */
  async function send(protocol: string, chunks: Uint8Array[]): Promise<Uint8Array> {
    const stream = await rogue.dialProtocol(await target(), protocol, { signal: AbortSignal.timeout(5000) })
    await stream.sink(chunks).catch(() => undefined)
    const back: Uint8Array[] = []
    try {
      for await (const c of stream.source) back.push(c.subarray())
    } catch {
      // A reset is a fine answer to garbage.
    }
    return new Uint8Array(Buffer.concat(back))
  }

  it('answers a deal proposal that is not CBOR, or the wrong shape, with a refusal, and keeps serving', async () => {
    const garbage = await send('/fil/storage/mk/1.2.1', [new Uint8Array([0xff, 0x00, 0x13, 0x37])])
    expect(garbage.length).toBe(0)
    const wrongShape = await send('/fil/storage/mk/1.2.1', [dagCbor.encode({ DealUUID: 'not bytes' })])
    expect(decodeDealResponse(dagCbor.decode(wrongShape))).toMatchObject({ accepted: false, message: expect.stringContaining('invalid deal params') })
    expect(await client.ask(provider, signal())).toMatchObject({ miner: provider })
  })

  it('cuts off a message larger than any the protocol has, and keeps serving', async () => {
    const huge = new Uint8Array(2 * 1024 * 1024)
    huge.set([0x5a, 0x00, 0x20, 0x00, 0x00]) // a 2 MiB byte string header
    expect((await send('/fil/storage/status/1.2.0', [huge])).length).toBe(0)
    expect(await client.ask(provider, signal())).toMatchObject({ miner: provider })
  })

  it('says no deal for a status request of a stranger with a bad signature', async () => {
    const back = await send('/fil/storage/status/1.2.0', [dagCbor.encode({ DealUUID: new Uint8Array(16), Signature: new Uint8Array([1, ...new Uint8Array(65)]) })])
    expect(decodeDealStatusResponse(dagCbor.decode(back), 'mainnet')).toMatchObject({ status: null, error: expect.stringContaining('no deal found') })
  })
})

describe('a provider that speaks only mk/1.2.0', () => {
  let old: Libp2p
  let received: unknown
  beforeAll(async () => {
    old = await createHost({ listen: ['/ip4/127.0.0.1/tcp/0'] })
    await serve(old, '/fil/storage/mk/1.2.0', async (message) => {
      received = message
      return encodeDealResponse({ accepted: false, message: 'test provider' })
    })
  })
  afterAll(async () => {
    await old?.stop()
  })

  it('gets the proposal on 1.2.0, written without the 1.2.1 fields', async () => {
    const directory = { peerOf: async () => ({ peerId: old.peerId.toString(), multiaddrs: old.getMultiaddrs().map((m) => m.decapsulateCode(421).toString()) }) }
    const c = await createProviderClient({ directory, signer, network: 'mainnet' })
    try {
      const answer = await c.propose({ dealUuid: crypto.randomUUID(), proposal: proposal(), dataRoot: 'bafkqaaa', transfer, removeUnsealedCopy: false, skipIpniAnnounce: false }, signal())
      expect(answer).toMatchObject({ accepted: false, message: 'test provider', protocol: '/fil/storage/mk/1.2.0' })
      expect(Object.keys(received as object)).not.toContain('SkipIPNIAnnounce')
      expect(decodeDealParams(received, 'mainnet').proposal.Client).toBe(signer.address)
    } finally {
      await c.close()
    }
  })
})
