import { createServer, type Server } from 'node:http'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { noise } from '@chainsafe/libp2p-noise'
import { yamux } from '@chainsafe/libp2p-yamux'
import { tcp } from '@libp2p/tcp'
import * as dagCbor from '@ipld/dag-cbor'
import { multiaddr } from '@multiformats/multiaddr'
import { blake2b } from '@noble/hashes/blake2.js'
import { createLibp2p, type Libp2p } from 'libp2p'
import { CID } from 'multiformats/cid'
import * as Digest from 'multiformats/hashes/digest'
import { afterAll, describe, expect, it } from 'vitest'
import { pino } from 'pino'
import { createGateway, type Gateway } from '../../server/gateway/index.ts'
import { createDealServiceClient } from '../../server/gateway/deals/index.ts'
import { connectToNetwork, type NetworkAccess } from '../../server/gateway/deals/market/network-access.ts'
import { devnetClock, lotusNetworkFor } from '../../server/network/index.ts'
import { createSimnet, type Simnet } from '../../server/simulation/simnet/index.ts'
import { SIMNET_RPC_PATH, simnetRpcListener } from '../../server/simulation/simnet/rpc-server.ts'
import type { DealProposal } from '../../server/network/types.ts'
import { createSigner, newPrivateKey } from '../../server/network/wallet/keys.ts'
import { createDealService, type DealService } from '../../server/service/index.ts'
import { addressFromBytes } from '../../server/shared/address.ts'
import { loadConfig, ConfigError } from '../../server/shared/config.ts'
import { EPOCH_SECONDS } from '../../server/shared/epochs.ts'
import { startServer, type RunningServer } from '../../server/shared/http.ts'

/**
 * NETWORK=devnet end to end: a Lotus-compatible node on loopback (our
 * simulated chain served alone, speaking testnet addresses as a devnet's
 * Lotus does) and a storage provider that is not our simulation's: a small
 * libp2p host written here, with its own CBOR, answering the ask, deal,
 * status and transports protocols as Boost does (boost storagemarket/lp2pimpl/net.go,
 * storagemarket/types/types.go), fetching the CAR over HTTP with the token
 * and serving its blocks at /ipfs/<cid>. The gateway and the deal service
 * know neither beyond the node's URL.
 *
 * It stands as Boost's docker devnet does: the miner publishes a DNS name
 * (boost docker/devnet/boost/entrypoint.sh: `lotus-miner actor set-addrs
 * /dns/boost/tcp/50000`; here /dns4/localhost, which only the system resolver
 * knows), its sectors are 8 MiB (docker/devnet/lotus-miner/Dockerfile
 * SECTOR_SIZE=8388608) while its ask keeps Boost's default MaxPieceSize of
 * 32 GiB (storagemarket/storedask/storedask.go), and a bigger piece fails in
 * sealing as Lotus's does ("piece cannot fit into a sector", lotus
 * storage/pipeline/input.go).
 */

const silent = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' })
const API_KEY = 'fgs_devnet-test-key-0000000000000001'
const GENESIS = 1704067200
const MiB = 1024 * 1024
/** The devnet's sectors: a piece must fit in one. */
const SECTOR_SIZE = 8 * MiB

// ---- a hand-written Boost-like provider ---------------------------------------

interface HeldDeal {
  proposalTuple: unknown[]
  signature: Uint8Array
  checkpoint: string
  error: string
  dealId: number
  publishCid: CID | null
  bytesReceived: number
  transferSize: number
}

/** One CBOR value each way per stream (go-cbor-util WriteCborRPC); the client closes its side after writing. */
async function readAll(stream: AsyncIterable<{ subarray(): Uint8Array }>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = []
  for await (const chunk of stream) chunks.push(chunk.subarray())
  return new Uint8Array(Buffer.concat(chunks))
}

/** big.Int bytes (sign byte, magnitude) as a decimal string. */
const tokenAmount = (b: Uint8Array): string => (b.length <= 1 ? '0' : BigInt(`0x${Buffer.from(b.subarray(1)).toString('hex')}`).toString())

/** A chain CID: DAG-CBOR, blake2b-256 (what Lotus names a signed proposal by). */
const chainCidOf = (bytes: Uint8Array) => CID.createV1(0x71, Digest.create(0xb220, blake2b(bytes, { dkLen: 32 })))

/** The blocks of a CARv1 (header, then varint-length sections of CID ‖ data; a zero length ends it, as the zeros after a CAR do). */
function carBlocks(car: Uint8Array): Map<string, Uint8Array> {
  const varint = (at: number): [number, number] => {
    let value = 0
    let shift = 0
    for (let i = at; ; i++) {
      value += (car[i] & 0x7f) * 2 ** shift
      shift += 7
      if (!(car[i] & 0x80)) return [value, i + 1]
    }
  }
  const blocks = new Map<string, Uint8Array>()
  let [length, at] = varint(0)
  at += length
  while (at < car.length) {
    ;[length, at] = varint(at)
    if (length === 0) break
    const [cid, rest] = CID.decodeFirst(car.subarray(at, at + length))
    blocks.set(cid.toString(), rest)
    at += length
  }
  return blocks
}

async function startForeignProvider(o: { providerId: string; simnet: Simnet }) {
  const deals = new Map<string, HeldDeal>()
  const blocks = new Map<string, Uint8Array>()
  const fetched: { url: string; authorized: boolean }[] = []
  // Trustless-gateway raw blocks, as booster-http serves them.
  const http: Server = createServer((req, res) => {
    const m = /^\/ipfs\/([a-z0-9]+)$/.exec(req.url ?? '')
    const block = m ? blocks.get(m[1]) : undefined
    if (!block) return res.writeHead(404).end()
    res.writeHead(200, { 'content-type': 'application/vnd.ipld.raw' }).end(block)
  })
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r))
  const httpPort = (http.address() as { port: number }).port

  const node: Libp2p = await createLibp2p({
    addresses: { listen: ['/ip4/127.0.0.1/tcp/0'] },
    transports: [tcp()],
    connectionEncrypters: [noise()],
    streamMuxers: [yamux()],
  })
  const handle = (protocol: string, answer: (request: unknown) => Promise<unknown> | unknown) =>
    node.handle(protocol, async (stream) => {
      try {
        const bytes = await readAll(stream)
        const reply = await answer(bytes.length > 0 ? dagCbor.decode(bytes) : null)
        if (!stream.send(dagCbor.encode(reply))) await stream.onDrain()
        await stream.close()
      } catch (err) {
        stream.abort(err as Error)
      }
    })

  // The ask (boost storagemarket/types legacytypes StorageAsk): free, 256 B to Boost's default 32 GiB; unsigned (no worker key here).
  await handle('/fil/storage/ask/1.1.0', (req) => {
    const miner = (req as { Miner: Uint8Array }).Miner
    return {
      Ask: {
        Ask: {
          Price: new Uint8Array(0),
          VerifiedPrice: new Uint8Array(0),
          MinPieceSize: 256,
          MaxPieceSize: 32 * 1024 ** 3,
          Miner: miner,
          Timestamp: 0,
          Expiry: 1_000_000_000,
          SeqNo: 0,
        },
        Signature: null,
      },
    }
  })

  // mk/1.2.1: accept, then fetch the CAR, keep its blocks and publish the deal on the (simulated) chain.
  await handle('/fil/storage/mk/1.2.1', (req) => {
    const p = req as {
      DealUUID: Uint8Array
      ClientDealProposal: [unknown[], Uint8Array]
      Transfer: { Type: string; Params: Uint8Array; Size: number }
    }
    const uuid = Buffer.from(p.DealUUID).toString('hex')
    const [tuple, signature] = p.ClientDealProposal
    if (p.Transfer.Type !== 'http') return { Accepted: false, Message: 'only http transfers' }
    const deal: HeldDeal = {
      proposalTuple: tuple,
      signature,
      checkpoint: 'Accepted',
      error: '',
      dealId: 0,
      publishCid: null,
      bytesReceived: 0,
      transferSize: p.Transfer.Size,
    }
    deals.set(uuid, deal)
    const { URL: url, Headers: headers } = JSON.parse(new TextDecoder().decode(p.Transfer.Params)) as {
      URL: string
      Headers: Record<string, string>
    }
    void (async () => {
      try {
        const res = await fetch(url, { headers })
        fetched.push({ url, authorized: Object.keys(headers).length > 0 })
        if (res.status !== 200) throw new Error(`transfer answered ${res.status}`)
        const car = new Uint8Array(await res.arrayBuffer())
        deal.bytesReceived = car.length
        for (const [cid, bytes] of carBlocks(car)) blocks.set(cid, bytes)
        deal.checkpoint = 'Transferred'
        // Sealing puts the piece into one sector: a bigger one never gets on chain.
        if ((tuple[1] as number) > SECTOR_SIZE) throw new Error('piece cannot fit into a sector')
        // The simulation keeps f… addresses; the wire carried address bytes, whose prefix is the reader's choice.
        const [pieceCid, pieceSize, verified, client, provider, label, start, end, price, pColl, cColl] = tuple as [
          CID,
          number,
          boolean,
          Uint8Array,
          Uint8Array,
          string,
          number,
          number,
          Uint8Array,
          Uint8Array,
          Uint8Array,
        ]
        const proposal: DealProposal = {
          PieceCID: { '/': pieceCid.toString() },
          PieceSize: pieceSize,
          VerifiedDeal: verified,
          Client: addressFromBytes(client, 'mainnet')!,
          Provider: addressFromBytes(provider, 'mainnet')!,
          Label: label,
          StartEpoch: start,
          EndEpoch: end,
          StoragePricePerEpoch: tokenAmount(price),
          ProviderCollateral: tokenAmount(pColl),
          ClientCollateral: tokenAmount(cColl),
        }
        const published = await o.simnet.proposeDeal(proposal)
        if (!published.accepted) throw new Error(published.reason)
        deal.dealId = published.dealId
        deal.publishCid = CID.parse(published.publishCid)
        deal.checkpoint = 'PublishConfirmed'
      } catch (err) {
        deal.error = (err as Error).message
      }
    })()
    return { Accepted: true, Message: '' }
  })

  // Status (boost storagemarket/types DealStatusResponse); the chain deal id once published.
  await handle('/fil/storage/status/1.2.0', (req) => {
    const r = req as { DealUUID: Uint8Array }
    const deal = deals.get(Buffer.from(r.DealUUID).toString('hex'))
    if (!deal)
      return {
        DealUUID: r.DealUUID,
        Error: 'no storage deal found',
        DealStatus: null,
        IsOffline: false,
        TransferSize: 0,
        NBytesReceived: 0,
      }
    return {
      DealUUID: r.DealUUID,
      Error: '',
      DealStatus: {
        Error: deal.error,
        Status: deal.checkpoint,
        SealingStatus: '',
        Proposal: deal.proposalTuple,
        SignedProposalCid: chainCidOf(dagCbor.encode([deal.proposalTuple, deal.signature])),
        PublishCid: deal.publishCid,
        ChainDealID: deal.dealId,
      },
      IsOffline: false,
      TransferSize: deal.transferSize,
      NBytesReceived: deal.bytesReceived,
    }
  })

  // Transports (boost retrievalmarket types QueryResponse): HTTP retrieval where the blocks are served.
  await handle('/fil/retrieval/transports/1.0.0', () => ({
    Protocols: [{ Name: 'http', Addresses: [multiaddr(`/dns4/localhost/tcp/${httpPort}/http`).bytes] }],
  }))

  // Where its peer listens, in its miner info (what `lotus-miner actor set-addrs` does on a devnet): a name, not an address.
  const port = node
    .getMultiaddrs()[0]
    .getComponents()
    .find((c) => c.name === 'tcp')!.value
  o.simnet.publishPeer(o.providerId, { peerId: node.peerId.toString(), multiaddrs: [`/dns4/localhost/tcp/${port}`] })
  o.simnet.setSectorSize(o.providerId, SECTOR_SIZE)
  return {
    deals,
    blocks,
    fetched,
    async close() {
      await node.stop()
      await new Promise((r) => http.close(r))
    },
  }
}

// ---- the stack on a devnet ---------------------------------------------------

const toClose: (() => Promise<unknown> | void)[] = []
afterAll(async () => {
  for (const close of toClose.reverse()) await close()
})

describe('NETWORK=devnet', () => {
  it('asks for LOTUS_URL, takes test addresses and small groups', () => {
    expect(() => loadConfig({ NETWORK: 'devnet' })).toThrow(ConfigError)
    expect(() => loadConfig({ NETWORK: 'devnet' })).toThrow(/LOTUS_URL: required when NETWORK=devnet/)
    const c = loadConfig({ NETWORK: 'devnet', LOTUS_URL: 'http://127.0.0.1:1234/rpc/v1' })
    expect(c.service.network).toBe('devnet')
    expect(c.gateway.groupSize).toBe(loadConfig({}).gateway.groupSize)
    expect(c.gateway.groupIdleSeconds).toBe(loadConfig({}).gateway.groupIdleSeconds)
  })

  it("reads its clock from the node, and the gateway takes a file to offloaded in pieces that fit the devnet's sectors with a provider that is not the simulation's, dialled at a DNS name", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'devnet-'))
    toClose.push(() => rmSync(dir, { recursive: true, force: true }))
    const clock = { now: Date.UTC(2025, 0, 15) }
    const now = () => clock.now
    // The "node": the simulated chain served alone, its providers not started.
    const simnet = createSimnet({ seed: 'devnet-tests', genesis: GENESIS, now })
    const rpc = await startServer(simnetRpcListener(simnet, { addressNetwork: 'testnet' }), 0, '127.0.0.1')
    toClose.push(() => rpc.close())
    const lotusUrl = `${rpc.url}${SIMNET_RPC_PATH}`

    // The clock is the node's: genesis = head timestamp − height × block delay.
    const nodeClock = await devnetClock({ url: lotusUrl })
    expect(nodeClock).toEqual({ name: 'devnet', genesis: GENESIS, epochSeconds: EPOCH_SECONDS })

    // One of the chain's providers, run by the foreign host.
    const candidates = await simnet.listProviders()
    const f0 = (await Promise.all(candidates.map(async (id) => ((await simnet.providerTerms(id))?.online ? id : null)))).find(
      (id) => id !== null,
    )!
    const provider = await startForeignProvider({ providerId: f0, simnet })
    toClose.push(() => provider.close())
    const providerId = `t${f0.slice(1)}`

    // The deal service on the devnet, its policy naming that provider.
    const serviceConfig = loadConfig({ NETWORK: 'devnet', LOTUS_URL: lotusUrl, DATA_DIR: dir, API_KEY, TICKER_ENABLED: 'false' }).service
    const service: DealService = await createDealService(
      { ...serviceConfig, port: 0 },
      { logger: silent, network: lotusNetworkFor(serviceConfig, { clock: nodeClock }), now, background: false },
    )
    toClose.push(() => service.close())
    const serviceServer: RunningServer = await startServer(service.app, 0, '127.0.0.1')
    toClose.push(() => serviceServer.close())
    const signer = createSigner(newPrivateKey(), 'testnet')
    expect(signer.address).toMatch(/^t1/)
    await service.tenants.addClientAddress((await service.tenants.byName('default'))!.id, signer.address)
    const policy = {
      settings: { priority: 'policy_respected' },
      mixGroup: { numberOfCopies: 0 },
      groups: [{ name: 'devnet', numberOfCopies: 1, providers: [{ addressId: providerId, comment: 'hand-written host' }] }],
    }
    const imported = await fetch(`${serviceServer.url}/private/v1/onboarding-policy/import?mode=replace`, {
      method: 'POST',
      headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' },
      body: JSON.stringify(policy),
    })
    expect(imported.status).toBe(200)

    // The gateway, reaching chain and provider only through the node's URL.
    const access: NetworkAccess = await connectToNetwork({ rpcUrl: lotusUrl, clock: nodeClock, signer, network: 'testnet' })
    toClose.push(() => access.close())
    const gateway: Gateway = await createGateway(
      {
        host: '127.0.0.1',
        port: 0,
        dataDir: join(dir, 'gateway'),
        network: 'devnet',
        // The devnet's default (GROUP_DEFAULTS): 64 MiB, eight times the provider's sectors.
        groupSize: loadConfig({ NETWORK: 'devnet', LOTUS_URL: lotusUrl }).gateway.groupSize,
        groupIdleSeconds: 3600,
        serviceUrl: serviceServer.url,
        serviceApiKey: API_KEY,
        clientAddress: signer.address,
        deals: {
          durationDays: 540,
          price: '0',
          verified: false,
          startOffsetEpochs: 5760,
          copies: 1,
          tickSeconds: 3600,
          retrievalCheckSeconds: 3600,
        },
      },
      {
        logger: silent,
        providers: access.port,
        service: createDealServiceClient({ url: serviceServer.url, apiKey: API_KEY }),
        now,
        dealTimeouts: { proposalMs: 3000, callMs: 2000, reloadMs: 3000 },
      },
    )
    toClose.push(() => gateway.close())
    const gatewayServer = await startServer(gateway.app, 0, '127.0.0.1')
    toClose.push(() => gatewayServer.close())
    gateway.setPublicUrl(gatewayServer.url)
    expect(gateway.content.groupSize()).toBe(64 * MiB)

    // The first pass (the deal timer runs one at start) reads what the policy's provider takes: one 8 MiB sector.
    await gateway.deals!.tick()
    expect(gateway.content.groupSize()).toBe(SECTOR_SIZE)

    const bytes = randomBytes(12 * MiB)
    expect((await fetch(`${gatewayServer.url}/report.bin`, { method: 'PUT', body: bytes })).status).toBe(201)
    await gateway.content.sealWritable()
    await gateway.content.settled()
    const details = async () => {
      const res = await fetch(`${gatewayServer.url}/file-info`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ filePath: '/report.bin', verbose: true }),
      })
      return (await res.json()).result.file.details
    }
    const seen = new Set<string>()
    let done = false
    for (let i = 0; i < 200 && !done; i++) {
      await gateway.deals!.tick()
      await new Promise((r) => setTimeout(r, 20))
      clock.now += 60 * EPOCH_SECONDS * 1000
      const d = await details()
      for (const g of d.groups) for (const deal of g.deals ?? []) seen.add(deal.state)
      done = d.state === 'offloaded'
    }
    expect(seen).toContain('active')
    expect(done).toBe(true)

    // 12 MiB in two groups, each one piece that fits a sector, each sealed by the provider.
    const d = await details()
    expect(d.groups.length).toBeGreaterThanOrEqual(2)
    for (const g of d.groups as { deals: { provider: string; dealId: number }[] }[]) {
      expect(g.deals).toHaveLength(1)
      const deal = g.deals[0]
      expect(deal.provider).toBe(providerId)
      expect([...provider.deals.values()].map((x) => x.dealId)).toContain(deal.dealId)
      const onChain = (await simnet.getDeal(deal.dealId))!.proposal
      expect(onChain.Provider).toBe(f0)
      expect(onChain.PieceSize).toBeLessThanOrEqual(SECTOR_SIZE)
    }
    expect([...provider.deals.values()].filter((x) => x.error)).toEqual([])
    // The foreign host fetched the CARs with the transfer token.
    expect(provider.fetched.length).toBeGreaterThan(0)
    expect(provider.fetched.every((f) => f.authorized)).toBe(true)
    // Offloaded: the bytes now come back from that provider's /ipfs blocks.
    const back = await fetch(`${gatewayServer.url}/report.bin`)
    expect(Buffer.from(await back.arrayBuffer()).equals(bytes)).toBe(true)
  }, 60_000)
})
