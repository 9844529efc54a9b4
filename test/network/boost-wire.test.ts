import * as dagCbor from '@ipld/dag-cbor'
import { describe, expect, it } from 'vitest'
import {
  decodeAskResponse,
  decodeDealParams,
  decodeDealStatusResponse,
  encodeAskResponse,
  encodeClientDealProposal,
  encodeDealParams,
  encodeDealProposal,
  encodeDealStatusResponse,
  encodeStorageAsk,
  signedProposalCid,
  type DealParams,
} from '../../server/network/boost/wire.ts'
import { httpUrlOf } from '../../server/network/boost/client.ts'
import { createSigner, verifySignature } from '../../server/network/wallet/keys.ts'
import { multiaddr } from '@multiformats/multiaddr'
import type { DealProposal } from '../../server/network/types.ts'

// The Trust Wallet Core key of wallet.test.ts: its address is a published vector.
const signer = createSigner(
  Uint8Array.from(Buffer.from('1d969865e189957b9824bd34f26d5cbf357fda1a6d844cbf0c9ab1ed93fa7dbe', 'hex')),
  'mainnet',
)

const proposal: DealProposal = {
  PieceCID: { '/': 'baga6ea4seaqao7s73y24kcutaosvacpdjgfe5pw76ooefnyqw4ynr3d2y6x2mpq' },
  PieceSize: 2048,
  VerifiedDeal: true,
  Client: signer.address,
  Provider: 'f01234',
  Label: 'bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi',
  StartEpoch: 4_000_000,
  EndEpoch: 4_518_400,
  StoragePricePerEpoch: '0',
  ProviderCollateral: '1000000000000000000',
  ClientCollateral: '0',
}

async function params(): Promise<DealParams> {
  return {
    dealUuid: '0b7c0f4e-2b2a-4d61-9a55-8f6f3e2b1c00',
    proposal,
    clientSignature: await signer.sign(encodeDealProposal(proposal)),
    dataRoot: 'bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi',
    transfer: {
      url: 'https://gw.example/deal-car/7',
      headers: { Authorization: 'Bearer t0k3n' },
      size: 1500,
      clientId: '0b7c0f4e-2b2a-4d61-9a55-8f6f3e2b1c00',
    },
    removeUnsealedCopy: false,
    skipIpniAnnounce: false,
  }
}

/** The text keys of a CBOR map in the order they are written (top level only). */
function mapKeys(bytes: Uint8Array): string[] {
  return Object.keys(dagCbor.decode(bytes) as object)
}

// go-fil-markets' encoding of a ClientDealProposal (its mk/1.1.0 Proposal carries one), as
// soramitsu/cpp-filecoin's test/core/markets/storage/mk_protocol_test.cpp records it
// ("Expected encoded bytes are from go-fil-markets implementation", commit b1a66cfd):
// the bytes from its 828b tuple through the signature (type 1, 65 zero bytes).
const GO_CLIENT_DEAL_PROPOSAL =
  '828bd82a58230012204bf5122f344554c53bde2ebb8cd2b7e3d1600ad631c385a5d7cce23c7785459a190100f555024716b023b7fe84b6e7dcda303c3d754b1a8ff2fc' +
  '55024716b023b7fe84b6e7dcda303c3d754b1a8ff2fc656c6162656c18651907d24200164300014d4300115c5842' +
  '01' +
  '00'.repeat(65)

describe('the market deal proposal (published vector)', () => {
  const goProposal: DealProposal = {
    PieceCID: { '/': 'QmTTA2daxGqo5denp6SwLzzkLJm3fuisYEi9CoWsuHpzfb' },
    PieceSize: 256,
    VerifiedDeal: true,
    Client: 't2i4llai5x72clnz643iydyplvjmni74x4vyme7ny',
    Provider: 't2i4llai5x72clnz643iydyplvjmni74x4vyme7ny',
    Label: 'label',
    StartEpoch: 101,
    EndEpoch: 2002,
    StoragePricePerEpoch: '22',
    ProviderCollateral: '333',
    ClientCollateral: '4444',
  }
  const zeroSignature = { type: 1 as const, data: new Uint8Array(65) }

  it('encodes a ClientDealProposal byte for byte as go-fil-markets does', () => {
    expect(Buffer.from(encodeClientDealProposal(goProposal, zeroSignature)).toString('hex')).toBe(GO_CLIENT_DEAL_PROPOSAL)
  })

  it('reads go-fil-markets bytes back into the same proposal', () => {
    const m = dagCbor.decode(encodeDealParams({ ...paramsOf(goProposal), clientSignature: zeroSignature })) as any
    m.ClientDealProposal = dagCbor.decode(Buffer.from(GO_CLIENT_DEAL_PROPOSAL, 'hex'))
    expect(decodeDealParams(m, 'testnet').proposal).toEqual(goProposal)
  })
})

const paramsOf = (p: DealProposal) => ({
  dealUuid: '0b7c0f4e-2b2a-4d61-9a55-8f6f3e2b1c00',
  proposal: p,
  dataRoot: 'bafkqaaa',
  transfer: { url: 'https://gw.example/deal-car/1', headers: {}, size: 1, clientId: 'x' },
  removeUnsealedCopy: false,
  skipIpniAnnounce: false,
})

describe('Boost storage market messages', () => {
  // Order and header bytes as Boost's generated encoders write them
  // (filecoin-project/boost storagemarket/types/types_cbor_gen.go: DealParams starts with
  // []byte{167}, DealParamsV120 with []byte{165}, then the fields in this order).
  it('writes DealParams (mk/1.2.1) as the 7-field map of Boost cbor-gen, keys in its order', async () => {
    const bytes = encodeDealParams(await params(), '/fil/storage/mk/1.2.1')
    expect(bytes[0]).toBe(167)
    expect(mapKeys(bytes)).toEqual([
      'DealUUID',
      'Transfer',
      'IsOffline',
      'DealDataRoot',
      'SkipIPNIAnnounce',
      'ClientDealProposal',
      'RemoveUnsealedCopy',
    ])
  })

  it('writes DealParamsV120 (mk/1.2.0) without the two 1.2.1 fields', async () => {
    const bytes = encodeDealParams(await params(), '/fil/storage/mk/1.2.0')
    expect(bytes[0]).toBe(165)
    expect(mapKeys(bytes)).toEqual(['DealUUID', 'Transfer', 'IsOffline', 'DealDataRoot', 'ClientDealProposal'])
  })

  it('carries the UUID as 16 bytes, the proposal as an 11-tuple and the transfer params as JSON {URL, Headers}', async () => {
    const m = dagCbor.decode(encodeDealParams(await params())) as any
    expect(m.DealUUID).toEqual(Uint8Array.from(Buffer.from('0b7c0f4e2b2a4d619a558f6f3e2b1c00', 'hex')))
    const [tuple, signature] = m.ClientDealProposal
    expect(tuple).toHaveLength(11)
    // Zero is empty bytes; 1 FIL is a sign byte 0 then 0x0de0b6b3a7640000 (go-state-types big.Int).
    expect(tuple[8]).toEqual(new Uint8Array(0))
    expect(Buffer.from(tuple[9]).toString('hex')).toBe('000de0b6b3a7640000')
    // Addresses as protocol byte ‖ payload: f01234 is 0x00 then leb128(1234) = d2 09.
    expect(Buffer.from(tuple[4]).toString('hex')).toBe('00d209')
    expect(signature[0]).toBe(1)
    expect(signature).toHaveLength(66)
    expect(JSON.parse(Buffer.from(m.Transfer.Params).toString())).toEqual({
      URL: 'https://gw.example/deal-car/7',
      Headers: { Authorization: 'Bearer t0k3n' },
    })
    expect(m.Transfer.Type).toBe('http')
    expect(m.Transfer.Size).toBe(1500)
  })

  it('reads back what it writes, and the client signature verifies over the proposal bytes', async () => {
    const p = await params()
    const read = decodeDealParams(dagCbor.decode(encodeDealParams(p)), 'mainnet')
    expect(read).toEqual(p)
    expect(verifySignature(signer.address, encodeDealProposal(read.proposal), read.clientSignature)).toBe(true)
    expect(verifySignature(signer.address, encodeDealProposal({ ...read.proposal, PieceSize: 4096 }), read.clientSignature)).toBe(false)
  })

  it('names the signed proposal by a blake2b-256 dag-cbor CID, as the chain does', async () => {
    const p = await params()
    expect(signedProposalCid(p.proposal, p.clientSignature)).toMatch(/^bafy2bzace[a-z2-7]+$/)
  })

  it('writes the storage ask map in length-first key order and reads it back', () => {
    const ask = {
      price: '500000000',
      verifiedPrice: '0',
      minPieceSize: 256,
      maxPieceSize: 34359738368,
      miner: 'f01234',
      timestamp: 100,
      expiry: 2980,
      seqNo: 3,
    }
    expect(mapKeys(encodeStorageAsk(ask))).toEqual([
      'Miner',
      'Price',
      'SeqNo',
      'Expiry',
      'Timestamp',
      'MaxPieceSize',
      'MinPieceSize',
      'VerifiedPrice',
    ])
    expect(decodeAskResponse(dagCbor.decode(encodeAskResponse(ask, null)), 'mainnet')).toEqual(ask)
    expect(decodeAskResponse(dagCbor.decode(encodeAskResponse(null, null)), 'mainnet')).toBeNull()
  })

  it('reads a deal status with its chain deal id and publish CID', () => {
    const bytes = encodeDealStatusResponse({
      dealUuid: '0b7c0f4e-2b2a-4d61-9a55-8f6f3e2b1c00',
      error: '',
      transferSize: 10,
      bytesReceived: 10,
      status: {
        error: '',
        checkpoint: 'PublishConfirmed',
        sealingStatus: '',
        proposal,
        signedProposalCid: 'bafy2bzaceaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
        publishCid: null,
        chainDealId: 77,
      },
    })
    expect(mapKeys(bytes)).toEqual(['Error', 'DealUUID', 'IsOffline', 'DealStatus', 'TransferSize', 'NBytesReceived'])
    const read = decodeDealStatusResponse(dagCbor.decode(bytes), 'mainnet')
    expect(read.status?.chainDealId).toBe(77)
    expect(read.status?.proposal).toEqual(proposal)
  })

  describe('refuses what a hostile or broken peer sends', () => {
    const bad = async (mutate: (m: any) => void) => {
      const m = dagCbor.decode(encodeDealParams(await params())) as any
      mutate(m)
      return () => decodeDealParams(m, 'mainnet')
    }
    it.each([
      ['a UUID given as text', (m: any) => (m.DealUUID = '0b7c0f4e-2b2a-4d61-9a55-8f6f3e2b1c00')],
      ['a 15-byte UUID', (m: any) => (m.DealUUID = m.DealUUID.subarray(1))],
      ['an offline deal', (m: any) => (m.IsOffline = true)],
      ['a graphsync transfer', (m: any) => (m.Transfer.Type = 'graphsync')],
      ['params that are not JSON', (m: any) => (m.Transfer.Params = new Uint8Array([0xff, 0xfe]))],
      ['a BLS signature', (m: any) => (m.ClientDealProposal[1] = new Uint8Array(97).fill(2))],
      ['a short proposal tuple', (m: any) => m.ClientDealProposal[0].pop()],
      ['a negative amount', (m: any) => (m.ClientDealProposal[0][8] = new Uint8Array([1, 5]))],
      ['a piece CID that is not a CID', (m: any) => (m.ClientDealProposal[0][0] = 'baga…')],
      ['an address of 3 bytes of protocol 1', (m: any) => (m.ClientDealProposal[0][3] = new Uint8Array([1, 2, 3]))],
    ])('%s', async (_what, mutate) => {
      expect(await bad(mutate)).toThrow(expect.objectContaining({ name: 'NetworkError', code: 'PROTOCOL_ERROR' }))
    })
    it('a map instead of DealParams', () => {
      expect(() => decodeDealParams([1, 2, 3], 'mainnet')).toThrow(expect.objectContaining({ code: 'PROTOCOL_ERROR' }))
    })
  })

  it('turns transport multiaddrs into retrieval base URLs', () => {
    expect(httpUrlOf(multiaddr('/ip4/10.0.0.5/tcp/7777/http').bytes)).toBe('http://10.0.0.5:7777')
    expect(httpUrlOf(multiaddr('/dns/sp.example.org/tcp/443/https').bytes)).toBe('https://sp.example.org:443')
    expect(httpUrlOf(multiaddr('/ip6/::1/tcp/80/http').bytes)).toBe('http://[::1]:80')
    expect(httpUrlOf(multiaddr('/ip4/10.0.0.5/tcp/24001').bytes)).toBeNull()
    expect(httpUrlOf(new Uint8Array([0xff, 0xff]))).toBeNull()
  })
})
