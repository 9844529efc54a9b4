import { noise } from '@chainsafe/libp2p-noise'
import { yamux } from '@chainsafe/libp2p-yamux'
import * as dagCbor from '@ipld/dag-cbor'
import { webSockets } from '@libp2p/websockets'
import { createLibp2p, type Libp2p } from 'libp2p'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createProviderClient, type ProviderClient } from '../../server/network/boost/client.ts'
import type { DealProposal } from '../../server/network/types.ts'
import { createSigner, newPrivateKey } from '../../server/network/wallet/keys.ts'
import { addressBytesOf } from '../../server/shared/address.ts'

/**
 * The client against a provider that listens only on WebSocket, as Curio's
 * market host does (curio market/libp2p/libp2p.go listens on /ws; the miner
 * info publishes /dns/<domain>/tcp/443/wss, here /dns4/localhost/tcp/N/ws).
 * The peer is a plain libp2p node built here, answering with bytes written
 * by hand, so nothing of the client's own host or codec stands in for it.
 */
const PROVIDER = 'f01234'
let peer: Libp2p
let client: ProviderClient
let published: string

beforeAll(async () => {
  peer = await createLibp2p({
    addresses: { listen: ['/ip4/127.0.0.1/tcp/0/ws'] },
    transports: [webSockets()],
    connectionEncrypters: [noise()],
    streamMuxers: [yamux()],
  })
  await peer.handle('/fil/storage/ask/1.1.0', async (stream) => {
    for await (const _ of stream) break
    // AskResponse{Ask: SignedStorageAsk{Ask: StorageAsk{...}, Signature: null}} (boost storagemarket/types/legacytypes/network/types.go)
    const ask = {
      Price: Uint8Array.of(0, 0x03, 0xe8),
      VerifiedPrice: new Uint8Array(0),
      MinPieceSize: 256 << 20,
      MaxPieceSize: 32 * 2 ** 30,
      Miner: addressBytesOf(PROVIDER),
      Timestamp: 100,
      Expiry: 3000,
      SeqNo: 0,
    }
    stream.send(dagCbor.encode({ Ask: { Ask: ask, Signature: null } }))
    await stream.close()
  })
  // A provider that reads the proposal and then drops the stream without answering.
  await peer.handle('/fil/storage/mk/1.2.1', async (stream) => {
    for await (const _ of stream) break
    stream.abort(new Error('provider went away'))
  })
  const port = peer
    .getMultiaddrs()[0]
    .getComponents()
    .find((c) => c.name === 'tcp')?.value
  published = `/dns4/localhost/tcp/${port}/ws`
  client = await createProviderClient({
    directory: { peerOf: async () => ({ peerId: peer.peerId.toString(), multiaddrs: [published] }) },
    network: 'mainnet',
  })
})
afterAll(async () => {
  await client?.close()
  await peer?.stop()
})

describe('provider client', () => {
  it('tells a proposal that was sent and never answered from one that never left: the provider may have taken it', async () => {
    const signer = createSigner(newPrivateKey(), 'mainnet')
    const proposing = await createProviderClient({
      directory: { peerOf: async () => ({ peerId: peer.peerId.toString(), multiaddrs: [published] }) },
      signer,
      network: 'mainnet',
    })
    try {
      const proposal: DealProposal = {
        PieceCID: { '/': 'baga6ea4seaqao7s73y24kcutaosvacpdjgfe5pw76ooefnyqw4ynr3d2y6x2mpq' },
        PieceSize: 1 << 20,
        VerifiedDeal: false,
        Client: signer.address,
        Provider: PROVIDER,
        Label: 'bafkqaaa',
        StartEpoch: 10_000,
        EndEpoch: 600_000,
        StoragePricePerEpoch: '0',
        ProviderCollateral: '0',
        ClientCollateral: '0',
      }
      const input = {
        dealUuid: '0b7c0f4e-2b2a-4d61-9a55-8f6f3e2b1c00',
        proposal,
        dataRoot: 'bafkqaaa',
        transfer: { url: 'http://127.0.0.1:9/x', headers: {}, size: 100, clientId: 'x' },
        removeUnsealedCopy: false,
        skipIpniAnnounce: false,
      }
      await expect(proposing.propose(input, AbortSignal.timeout(10_000))).rejects.toMatchObject({
        name: 'NetworkError',
        code: 'PROTOCOL_ERROR',
        unanswered: true,
      })
    } finally {
      await proposing.close()
    }
  })

  it('tells a provider that does not speak a protocol (REFUSED) from one that cannot be reached (UNREACHABLE)', async () => {
    const signer = createSigner(newPrivateKey(), 'mainnet')
    const asking = await createProviderClient({
      directory: { peerOf: async () => ({ peerId: peer.peerId.toString(), multiaddrs: [published] }) },
      signer,
      network: 'mainnet',
    })
    // The peer serves no /fil/storage/status/1.2.0: multistream-select answers "na".
    await expect(asking.status(PROVIDER, '0b7c0f4e-2b2a-4d61-9a55-8f6f3e2b1c00', AbortSignal.timeout(10_000))).rejects.toMatchObject({
      name: 'NetworkError',
      code: 'REFUSED',
      providerReason: expect.stringContaining('/fil/storage/status/1.2.0'),
    })
    await asking.close()
    // Nothing listens on port 1.
    const nowhere = await createProviderClient({
      directory: { peerOf: async () => ({ peerId: peer.peerId.toString(), multiaddrs: ['/ip4/127.0.0.1/tcp/1/ws'] }) },
      network: 'mainnet',
    })
    await expect(nowhere.ask(PROVIDER, AbortSignal.timeout(10_000))).rejects.toMatchObject({ name: 'NetworkError', code: 'UNREACHABLE' })
    await nowhere.close()
  })

  it('reaches a provider that publishes only a WebSocket address, and reads its ask', async () => {
    const ask = await client.ask(PROVIDER, AbortSignal.timeout(10_000))
    expect(ask).toMatchObject({ price: '1000', verifiedPrice: '0', minPieceSize: 256 << 20, miner: PROVIDER })
  })

  it('dials a /dns name as Curio’s devnet publishes it (/dns/curio/tcp/12310/ws), through the system resolver', async () => {
    // `localhost` comes from the hosts file, which Node's own DNS queries (dns.resolve*, what libp2p's resolver
    // uses) never read: only getaddrinfo (dns.lookup, what the TCP and WebSocket transports dial through) does.
    const named = published.replace('/dns4/', '/dns/')
    const byName = await createProviderClient({
      directory: { peerOf: async () => ({ peerId: peer.peerId.toString(), multiaddrs: [named] }) },
      network: 'mainnet',
    })
    try {
      expect(await byName.ask(PROVIDER, AbortSignal.timeout(10_000))).toMatchObject({ miner: PROVIDER, maxPieceSize: 32 * 2 ** 30 })
    } finally {
      await byName.close()
    }
  })
})
