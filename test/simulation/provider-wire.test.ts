import * as dagCbor from '@ipld/dag-cbor'
import { CID } from 'multiformats/cid'
import { describe, expect, it } from 'vitest'
import * as client from '../../server/network/boost/wire.ts'
import * as sim from '../../server/simulation/simnet/provider-wire.ts'
import type { DealProposal } from '../../server/network/types.ts'
import { formatAddress } from '../../server/shared/address.ts'

/**
 * Golden bytes of the storage market messages, written out by hand from the
 * cbor-gen sources (boost storagemarket/types/types_cbor_gen.go,
 * legacytypes/types_cbor_gen.go, legacytypes/network/types_cbor_gen.go,
 * retrievalmarket/types/transports.ipldsch, go-state-types
 * builtin/v9/market/cbor_gen.go). The client's encoders must write exactly
 * these bytes and the simulation's decoders must read them, and the other
 * way round, so neither side can drift from the real shape on its own.
 *
 * CBOR headers used below (RFC 8949): major type in the top 3 bits, length
 * in the low 5 (or in the next 1/2/4 bytes for 24/25/26):
 *   0x00-0x17 uint 0..23, 0x18 xx uint8, 0x19 xxxx uint16, 0x1a xxxxxxxx uint32;
 *   0x40+n byte string of n<24 bytes, 0x58 nn byte string of nn bytes;
 *   0x60+n text string of n<24 bytes, 0x78 nn text string of nn bytes;
 *   0x80+n array of n, 0xa0+n map of n pairs; 0xf4 false, 0xf5 true, 0xf6 null;
 *   0xd8 0x2a tag 42 (a CID: byte string of 0x00 then the binary CID).
 * cbor-gen writes a struct's keys shortest first, equal lengths bytewise
 * (the order of each MarshalCBOR above).
 */
const hex = (...parts: string[]) => parts.join('').replace(/\s+/g, '')
const bytesOf = (h: string) => Uint8Array.from(Buffer.from(h, 'hex'))
const toHex = (b: Uint8Array) => Buffer.from(b).toString('hex')
/** A map key: a text string, header 0x60 | length (all keys here are under 24 bytes), then its ASCII. */
const key = (name: string) => {
  expect(name.length).toBeLessThan(24)
  return (0x60 + name.length).toString(16) + Buffer.from(name, 'ascii').toString('hex')
}

// ---- the fixture values ---------------------------------------------------------

// Piece CID: v1 (01), codec fil-commitment-unsealed 0xf101 as varint (81 e2 03), multihash
// sha2-256-trunc254-padded 0x1012 as varint (92 20), digest length 32 (20), 32 bytes of 0x11.
// 1+3+2+1+32 = 39 bytes, plus the 0x00 prefix of tag 42 = 40 = 0x28: d8 2a 58 28 00 …
const PIECE_DIGEST = '11'.repeat(32)
const PIECE_CID_HEX = hex('d82a 5828 00', '01 81e203 9220 20', PIECE_DIGEST)
const PIECE_CID = CID.decode(bytesOf(hex('01 81e203 9220 20', PIECE_DIGEST))).toString()
// Client f1…: protocol byte 01 and a 20-byte payload (0xaa × 20): 21 bytes, header 0x40+21 = 0x55.
const CLIENT = formatAddress('mainnet', 1, new Uint8Array(20).fill(0xaa))
const CLIENT_HEX = hex('55 01', 'aa'.repeat(20))
// Provider f01000: protocol 00, then 1000 as unsigned LEB128 (e8 07): 3 bytes, header 0x43.
const PROVIDER_HEX = '43 00 e807'

const proposal: DealProposal = {
  PieceCID: { '/': PIECE_CID },
  PieceSize: 2048,
  VerifiedDeal: true,
  Client: CLIENT,
  Provider: 'f01000',
  Label: 'hi',
  StartEpoch: 100_000,
  EndEpoch: 200_000,
  StoragePricePerEpoch: '0',
  ProviderCollateral: '1000',
  ClientCollateral: '0',
}
// market.DealProposal, a tuple of 11 (0x8b), in go-state-types' field order.
const PROPOSAL_HEX = hex(
  '8b',
  PIECE_CID_HEX, // PieceCID
  '19 0800', // PieceSize 2048 (uint16 follows)
  'f5', // VerifiedDeal true
  CLIENT_HEX, // Client
  PROVIDER_HEX, // Provider
  '62 6869', // Label "hi": text of 2
  '1a 000186a0', // StartEpoch 100000 (uint32)
  '1a 00030d40', // EndEpoch 200000
  '40', // StoragePricePerEpoch 0: big.Int zero is the empty byte string
  '43 00 03e8', // ProviderCollateral 1000: sign byte 00 (positive), magnitude 03 e8
  '40', // ClientCollateral 0
)
// crypto.Signature: type byte 01 (secp256k1) then 65 bytes (r‖s‖v): 66 bytes, header 58 42.
const SIG_DATA = new Uint8Array(65).fill(0x22)
SIG_DATA[64] = 1
const SIG_HEX = hex('5842 01', toHex(SIG_DATA))
const clientSig = { type: 1 as const, data: SIG_DATA }

const UUID = '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0'
// uuid.UUID ([16]byte): cbor-gen writes it as a byte string of 16 (0x50).
const UUID_HEX = hex('50', UUID.replace(/-/g, ''))
// bafkqaaa: CIDv1 (01), raw (55), identity multihash (00) of length 0 (00): 4 bytes + 0x00 prefix = 5 (0x45).
const ROOT_HEX = 'd82a 45 00 01550000'
const PARAMS_JSON = JSON.stringify({ URL: 'http://h/c', Headers: {} }) // 33 bytes
// Transfer: a map of 4 (a4), keys Size, Type (4 letters each, S < T), Params (6), ClientID (8).
const TRANSFER_HEX = hex(
  'a4',
  key('Size'),
  '19 03e8', // 1000
  key('Type'),
  key('http'), // the value "http" is a 4-letter text like a key
  key('Params'),
  '58 21',
  Buffer.from(PARAMS_JSON).toString('hex'), // JSON bytes: 33 = 0x21 ≥ 24, so 58 21
  key('ClientID'),
  '62 6331', // "c1"
)
/** DealParams (mk 1.2.1): a map of 7: DealUUID, Transfer (8; D < T), IsOffline (9), DealDataRoot (12), SkipIPNIAnnounce (16), ClientDealProposal, RemoveUnsealedCopy (18; C < R). */
const DEAL_PARAMS_121 = hex(
  'a7',
  key('DealUUID'),
  UUID_HEX,
  key('Transfer'),
  TRANSFER_HEX,
  key('IsOffline'),
  'f4',
  key('DealDataRoot'),
  ROOT_HEX,
  key('SkipIPNIAnnounce'),
  'f4',
  key('ClientDealProposal'),
  '82',
  PROPOSAL_HEX,
  SIG_HEX, // ClientDealProposal: a tuple of 2
  key('RemoveUnsealedCopy'),
  'f5',
)
/** DealParamsV120 (mk 1.2.0): the same without the two 1.2.1 fields, a map of 5. */
const DEAL_PARAMS_120 = hex(
  'a5',
  key('DealUUID'),
  UUID_HEX,
  key('Transfer'),
  TRANSFER_HEX,
  key('IsOffline'),
  'f4',
  key('DealDataRoot'),
  ROOT_HEX,
  key('ClientDealProposal'),
  '82',
  PROPOSAL_HEX,
  SIG_HEX,
)
const clientParams: client.DealParams = {
  dealUuid: UUID,
  proposal,
  clientSignature: clientSig,
  dataRoot: 'bafkqaaa',
  transfer: { url: 'http://h/c', headers: {}, size: 1000, clientId: 'c1' },
  removeUnsealedCopy: true,
  skipIpniAnnounce: false,
}

const decode = (h: string) => sim.decodeOne(bytesOf(h))!.value

describe('storage market messages, byte for byte as cbor-gen writes them', () => {
  it('market.DealProposal: the client signs these 11-tuple bytes, and the simulation reads them back', () => {
    expect(toHex(client.encodeDealProposal(proposal))).toBe(PROPOSAL_HEX)
    expect(sim.decodeDealProposal(decode(PROPOSAL_HEX)).proposal).toEqual(proposal)
    expect(toHex(sim.encode(sim.dealProposalTuple(proposal)))).toBe(PROPOSAL_HEX)
    // The signed proposal's CID: both sides name it the same (dag-cbor, blake2b-256 over [proposal, signature]).
    const cdp = sim.decodeClientDealProposal(decode(hex('82', PROPOSAL_HEX, SIG_HEX)))
    expect(sim.clientDealProposalCid(cdp).toString()).toBe(client.signedProposalCid(proposal, clientSig))
    expect(toHex(client.encodeClientDealProposal(proposal, clientSig))).toBe(hex('82', PROPOSAL_HEX, SIG_HEX))
  })

  it('DealParams on mk/1.2.1 and DealParamsV120 on mk/1.2.0, both ways', () => {
    expect(toHex(client.encodeDealParams(clientParams, '/fil/storage/mk/1.2.1'))).toBe(DEAL_PARAMS_121)
    expect(toHex(client.encodeDealParams(clientParams, '/fil/storage/mk/1.2.0'))).toBe(DEAL_PARAMS_120)
    const read = sim.decodeDealParams(decode(DEAL_PARAMS_121))
    expect(read).toMatchObject({
      dealUuid: UUID,
      isOffline: false,
      skipIpniAnnounce: false,
      removeUnsealedCopy: true,
      transfer: { type: 'http', clientId: 'c1', size: 1000 },
    })
    expect(read.clientDealProposal.proposal).toEqual(proposal)
    expect(sim.decodeHttpTransferParams(read.transfer.params)).toEqual({ url: 'http://h/c', headers: {} })
    // On 1.2.0 the two later fields are absent and read as false, as cbor-gen leaves missing fields at zero.
    expect(sim.decodeDealParams(decode(DEAL_PARAMS_120))).toMatchObject({ skipIpniAnnounce: false, removeUnsealedCopy: false })
    expect(toHex(sim.encodeDealParams(read, '1.2.1'))).toBe(DEAL_PARAMS_121)
    expect(toHex(sim.encodeDealParams(read, '1.2.0'))).toBe(DEAL_PARAMS_120)
    expect(client.decodeDealParams(decode(DEAL_PARAMS_121), 'mainnet')).toEqual(clientParams)
  })

  it('DealResponse: Message (7) before Accepted (8)', () => {
    const golden = hex('a2', key('Message'), key('no'), key('Accepted'), 'f4')
    expect(toHex(client.encodeDealResponse({ accepted: false, message: 'no' }))).toBe(golden)
    expect(toHex(sim.encodeDealResponse({ accepted: false, message: 'no' }))).toBe(golden)
    expect(sim.decodeDealResponse(decode(golden))).toEqual({ accepted: false, message: 'no' })
    expect(client.decodeDealResponse(decode(golden))).toEqual({ accepted: false, message: 'no' })
  })

  it('DealStatusRequest: DealUUID (8) then Signature (9)', () => {
    const golden = hex('a2', key('DealUUID'), UUID_HEX, key('Signature'), SIG_HEX)
    expect(toHex(client.encodeDealStatusRequest({ dealUuid: UUID, signature: clientSig }))).toBe(golden)
    expect(sim.decodeDealStatusRequest(decode(golden))).toEqual({ dealUuid: UUID, signature: { type: 1, data: SIG_DATA } })
    expect(toHex(sim.encodeDealStatusRequest({ dealUuid: UUID, signature: clientSig }))).toBe(golden)
  })

  it('DealStatusResponse with a DealStatus, and with a nil one', () => {
    // signed proposal CID: v1 (01), dag-cbor (71), blake2b-256 0xb220 as varint (a0 e4 02), length 32 (20), digest.
    const spc = CID.parse(client.signedProposalCid(proposal, clientSig))
    expect(toHex(spc.bytes.subarray(0, 6))).toBe('0171a0e40220')
    const SPC_HEX = hex('d82a 5827 00', toHex(spc.bytes)) // 38 bytes + prefix = 39 = 0x27
    const golden = hex(
      'a6', // Error (5), DealUUID (8), IsOffline (9), DealStatus (10), TransferSize (12), NBytesReceived (14)
      key('Error'),
      '60',
      key('DealUUID'),
      UUID_HEX,
      key('IsOffline'),
      'f4',
      key('DealStatus'),
      'a7', // Error (5), Status (6), Proposal (8), PublishCid (10), ChainDealID (11), SealingStatus (13), SignedProposalCid (17)
      key('Error'),
      '60',
      key('Status'),
      key('Accepted'),
      key('Proposal'),
      PROPOSAL_HEX,
      key('PublishCid'),
      'f6', // a nil *cid.Cid is null
      key('ChainDealID'),
      '00',
      key('SealingStatus'),
      '60',
      key('SignedProposalCid'),
      SPC_HEX,
      key('TransferSize'),
      '19 03e8',
      key('NBytesReceived'),
      '18 64', // 100 (uint8 follows)
    )
    const clientView: client.DealStatusResponse = {
      dealUuid: UUID,
      error: '',
      transferSize: 1000,
      bytesReceived: 100,
      status: {
        error: '',
        checkpoint: 'Accepted',
        sealingStatus: '',
        proposal,
        signedProposalCid: spc.toString(),
        publishCid: null,
        chainDealId: 0,
      },
    }
    expect(toHex(client.encodeDealStatusResponse(clientView))).toBe(golden)
    const simView = sim.decodeDealStatusResponse(decode(golden))
    expect(simView).toMatchObject({
      dealUuid: UUID,
      error: '',
      transferSize: 1000,
      nBytesReceived: 100,
      dealStatus: { status: 'Accepted', publishCid: null, chainDealId: 0 },
    })
    expect(toHex(sim.encodeDealStatusResponse(simView))).toBe(golden)
    expect(client.decodeDealStatusResponse(decode(golden), 'mainnet')).toEqual(clientView)

    // No such deal: DealStatus null (f6), the reason in Error, sizes zero.
    const none = hex(
      'a6',
      key('Error'),
      key('gone'),
      key('DealUUID'),
      UUID_HEX,
      key('IsOffline'),
      'f4',
      key('DealStatus'),
      'f6',
      key('TransferSize'),
      '00',
      key('NBytesReceived'),
      '00',
    )
    expect(
      toHex(
        sim.encodeDealStatusResponse({
          dealUuid: UUID,
          error: 'gone',
          dealStatus: null,
          isOffline: false,
          transferSize: 0,
          nBytesReceived: 0,
        }),
      ),
    ).toBe(none)
    expect(client.decodeDealStatusResponse(decode(none), 'mainnet')).toMatchObject({ status: null, error: 'gone' })
  })

  it('AskRequest and AskResponse{SignedStorageAsk}: the 8-field legacy StorageAsk', () => {
    const request = hex('a1', key('Miner'), PROVIDER_HEX)
    expect(toHex(client.encodeAskRequest('f01000'))).toBe(request)
    expect(sim.decodeAskRequest(decode(request))).toBe('f01000')
    // Keys: Miner, Price, SeqNo (5: M < P < S), Expiry (6), Timestamp (9), MaxPieceSize, MinPieceSize (12: Max < Min), VerifiedPrice (13).
    const ask = hex(
      'a8',
      key('Miner'),
      PROVIDER_HEX,
      key('Price'),
      '44 00 0f4240', // 1000000 attoFIL per GiB per epoch: sign byte, then 0f 42 40
      key('SeqNo'),
      '00',
      key('Expiry'),
      '1a 00018d60', // 101728
      key('Timestamp'),
      '1a 000186a0', // 100000
      key('MaxPieceSize'),
      '1b 0000000800000000', // 32 GiB = 2^35 (uint64 follows)
      key('MinPieceSize'),
      '19 0100', // 256
      key('VerifiedPrice'),
      '40', // 0
    )
    const response = hex('a1', key('Ask'), 'a2', key('Ask'), ask, key('Signature'), SIG_HEX)
    const clientAsk: client.StorageAsk = {
      price: '1000000',
      verifiedPrice: '0',
      minPieceSize: 256,
      maxPieceSize: 2 ** 35,
      miner: 'f01000',
      timestamp: 100_000,
      expiry: 101_728,
      seqNo: 0,
    }
    const simAsk: sim.WireStorageAsk = { ...clientAsk, price: 1_000_000n, verifiedPrice: 0n }
    expect(toHex(sim.encodeStorageAsk(simAsk))).toBe(ask)
    expect(toHex(client.encodeStorageAsk(clientAsk))).toBe(ask)
    expect(toHex(sim.encodeAskResponse({ ask: simAsk, signature: clientSig }))).toBe(response)
    expect(toHex(client.encodeAskResponse(clientAsk, clientSig))).toBe(response)
    expect(client.decodeAskResponse(decode(response), 'mainnet')).toEqual(clientAsk)
    expect(sim.decodeAskResponse(decode(response))).toEqual({ ask: simAsk, signature: { type: 1, data: SIG_DATA } })
    // No ask for that miner: AskResponse{Ask: nil}.
    expect(toHex(sim.encodeAskResponse(null))).toBe(hex('a1', key('Ask'), 'f6'))
    expect(client.decodeAskResponse(decode(hex('a1', key('Ask'), 'f6')), 'mainnet')).toBeNull()
  })

  it('transports QueryResponse: Protocols [{Name (4), Addresses (9)}], addresses as multiaddr bytes', () => {
    // /ip4/127.0.0.1/tcp/80/http: ip4 (04) 7f000001, tcp (06) 0050, http (0x01e0 as varint: e0 03): 5 + 3 + 2 = 10 bytes (0x4a).
    const addr = '04 7f000001 06 0050 e003'
    const golden = hex('a1', key('Protocols'), '81', 'a2', key('Name'), key('http'), key('Addresses'), '81', '4a', addr)
    const protocols = [{ name: 'http', addresses: [bytesOf(hex(addr))] }]
    expect(toHex(sim.encodeQueryResponse(protocols))).toBe(golden)
    expect(toHex(client.encodeTransports(protocols))).toBe(golden)
    expect(client.decodeTransports(decode(golden))).toEqual(protocols)
    expect(sim.decodeQueryResponse(decode(golden))).toEqual(protocols)
  })

  it('reads a label sent as bytes (FIP-0027), and re-encodes the proposal as it came for the signature check', () => {
    const withBytesLabel = PROPOSAL_HEX.replace('626869', '426869') // byte string of 2 instead of text
    const cdp = sim.decodeClientDealProposal(decode(hex('82', withBytesLabel, SIG_HEX)))
    expect(cdp.proposal.Label).toBe('hi')
    expect(toHex(sim.proposalSigningBytes(cdp))).toBe(withBytesLabel)
  })

  it('refuses fields of the wrong CBOR type, as cbor-gen does', () => {
    expect(() => sim.decodeDealParams(dagCbor.decode(dagCbor.encode({ DealUUID: 'not bytes' })))).toThrow(sim.ProviderWireError)
    expect(() => sim.decodeDealStatusRequest(decode(hex('a2', key('DealUUID'), '4100', key('Signature'), SIG_HEX)))).toThrow(/16 bytes/)
  })
})
