import { noise } from '@chainsafe/libp2p-noise'
import { yamux } from '@chainsafe/libp2p-yamux'
import * as dagCbor from '@ipld/dag-cbor'
import { webSockets } from '@libp2p/websockets'
import { multiaddr } from '@multiformats/multiaddr'
import { createLibp2p, type Libp2p } from 'libp2p'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createProviderClient, type ProviderClient } from '../../server/network/boost/client.ts'
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
  await peer.handle('/fil/storage/ask/1.1.0', async ({ stream }) => {
    for await (const _ of stream.source) break
    // AskResponse{Ask: SignedStorageAsk{Ask: StorageAsk{...}, Signature: null}} (boost storagemarket/types/legacytypes/network/types.go)
    const ask = {
      Price: Uint8Array.of(0, 0x03, 0xe8), VerifiedPrice: new Uint8Array(0), MinPieceSize: 256 << 20, MaxPieceSize: 32 * 2 ** 30,
      Miner: addressBytesOf(PROVIDER), Timestamp: 100, Expiry: 3000, SeqNo: 0,
    }
    await stream.sink([dagCbor.encode({ Ask: { Ask: ask, Signature: null } })])
    await stream.close()
  })
  const port = multiaddr(peer.getMultiaddrs()[0].toString()).toOptions().port
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
  it('reaches a provider that publishes only a WebSocket address, and reads its ask', async () => {
    const ask = await client.ask(PROVIDER, AbortSignal.timeout(10_000))
    expect(ask).toMatchObject({ price: '1000', verifiedPrice: '0', minPieceSize: 256 << 20, miner: PROVIDER })
  })
})
