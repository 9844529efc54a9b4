/**
 * Golden bytes for chain messages, which the client (server/network/wallet,
 * server/network/lotus) and the simulated chain (server/simulation/simnet/
 * chain-wire.ts) each write with their own code: both must give these bytes
 * and CIDs, or a push to a real node would be refused while the simulation
 * agreed with itself. The vectors are Trust Wallet Core's Filecoin tests
 * (tests/chains/Filecoin/TransactionTests.cpp: a message and its CID;
 * TWAnySignerTests.cpp: a signed 600 FIL transfer as Lotus JSON; SignerTests:
 * the pre-image hash, blake2b-256 of the message CID's bytes). The signed
 * CID was computed outside this code base (Python hashlib blake2b over the
 * bytes written out below), following lotus chain/types/signedmessage.go.
 */
import { blake2b } from '@noble/hashes/blake2.js'
import { CID } from 'multiformats/cid'
import { describe, expect, it } from 'vitest'
import { fromLotusMessage, lotusSignature, toLotusMessage } from '../../server/network/lotus/messages.ts'
import {
  ChainWireError,
  messageCbor,
  messageCid,
  messageProblem,
  readJsonMessage,
  readJsonSignedMessage,
  signedMessageCbor,
  signedMessageCid,
  verifyMessageSignature,
  writeJsonMessage,
  type ChainMessage,
} from '../../server/simulation/simnet/chain-wire.ts'
import {
  chainCid,
  encodeMessage,
  encodeSignedMessage,
  signedMessageCid as clientSignedMessageCid,
  type Message,
} from '../../server/network/wallet/message.ts'

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex')
const clientMessage = ({ version: _, ...m }: ChainMessage): Message => m

// ---- TransactionTests.cpp: a send from the key 2f0f…941e ------------------------------
const SEND: ChainMessage = {
  version: 0,
  to: 'f1hvadvq4rd2pyayrigjx2nbqz2nvemqouslw4wxi',
  from: 'f1hvat2tb74pmj7gkjljemmbdcestr6dgxpfflm4q',
  nonce: 0x12_3456_7890,
  value: 1000n,
  gasLimit: 3_333_333_333,
  gasFeeCap: 11_111_111n,
  gasPremium: 333_333n,
  method: 0,
  params: new Uint8Array(0),
}
const SEND_CBOR = [
  '8a', // array of 10
  '00', // Version 0
  '55' + '01' + '3d403ac3911e9f806228326fa68619d36a4641d4', // To: bytes(0x15 = 21) = protocol 1 ‖ 20-byte hash
  '55' + '01' + '3d413d4c3fe3d89f99495a48c6046224a71f0cd7', // From: likewise
  '1b' + '0000001234567890', // Nonce: uint, 8-byte argument (0x1b) since 0x1234567890 > 2^32
  '43' + '00' + '03e8', // Value 1000: bytes(3) = sign 00 ‖ 0x03e8
  '1a' + 'c6aea155', // GasLimit 3333333333 = 0xc6aea155: uint, 4-byte argument
  '44' + '00' + 'a98ac7', // GasFeeCap 11111111 = 0xa98ac7: bytes(4) = sign ‖ 3 bytes
  '44' + '00' + '051615', // GasPremium 333333 = 0x051615
  '00', // Method 0 (send)
  '40', // Params: bytes(0)
].join('')
// TransactionTests.cpp's tx.cid(): 01 (CIDv1) 71 (dag-cbor) a0e402 (varint 0xb220, blake2b-256) 20 (32 bytes) ‖ digest.
const SEND_CID_BYTES = '0171a0e40220a3b06c2837a94e3a431a78b00536d0298455ceec3d304adf26a3868147c4e6e1'

// ---- TWAnySignerTests.cpp: 600 FIL to an f3 address, signed by 1d96…7dbe ----------------
const TRANSFER_JSON = {
  Message: {
    From: 'f1z4a36sc7mfbv4z3qwutblp2flycdui3baffytbq',
    GasFeeCap: '700000000000000000000',
    GasLimit: 1000,
    GasPremium: '800000000000000000000',
    Method: 0,
    Nonce: 2,
    To: 'f3um6uo3qt5of54xjbx3hsxbw5mbsc6auxzrvfxekn5bv3duewqyn2tg5rhrlx73qahzzpkhuj7a34iq7oifsq',
    Value: '600000000000000000000',
  },
  Signature: { Data: 'jMRu+OZ/lfppgmqSfGsntFrRLWZnUg3ZYmJTTRLsVt4V1310vR3VKGJpaE6S4sNvDOE6sEgmN9YmfTkPVK2qMgE=', Type: 1 },
}
const TRANSFER_CBOR = [
  '8a',
  '00',
  '5831' + '03' + 'a33d476e13eb8bde5d21becf2b86dd60642f0297cc6a5b914de86bb1d096861ba99bb13c577fee003e72f51e89f837c4', // To: bytes(0x31 = 49) = protocol 3 ‖ 48-byte BLS key
  '55' + '01' + 'cf01bf485f61435e6770b52615bf455e043a2361', // From: bytes(21) = protocol 1 ‖ hash
  '02', // Nonce 2
  '4a' + '00' + '2086ac351052600000', // Value 600e18 = 0x2086ac351052600000 (9 bytes): bytes(10) = sign ‖ magnitude
  '1903e8', // GasLimit 1000: uint, 2-byte argument
  '4a' + '00' + '25f273933db5700000', // GasFeeCap 700e18
  '4a' + '00' + '2b5e3af16b18800000', // GasPremium 800e18
  '00',
  '40',
].join('')
const TRANSFER_CID = 'bafy2bzacea3ltn5bqva2nd4sxyqozawflbfgvzqrvtmgtih6s6dvlvbg46ww4'
// SignerTests.cpp: what the key signs, blake2b-256 of the CID's bytes.
const TRANSFER_PREIMAGE_HASH = '8368c0f622b2c529c7fa147d75aa02aaa7fc13fc4847d4dc57e7a5c59048aafe'
const SIGNATURE_HEX =
  '8cc46ef8e67f95fa69826a927c6b27b45ad12d6667520dd96262534d12ec56de15d77d74bd1dd5286269684e92e2c36f0ce13ab0482637d6267d390f54adaa3201'
const SIGNED_TRANSFER_CBOR = [
  '82', // array of 2: [Message, Signature]
  TRANSFER_CBOR,
  '5842' + '01' + SIGNATURE_HEX, // Signature: bytes(0x42 = 66) = type 1 (secp256k1) ‖ 65 bytes r ‖ s ‖ recovery id
].join('')
const SIGNED_TRANSFER_CID = 'bafy2bzacebqpf7cgk24q4y236gj424mdxwkgqj37wvzzjiazpoyzgzt226zpm'

describe('chain messages: the client and the simulated chain write the same bytes', () => {
  it("encodes a message as lotus chain/types Message.MarshalCBOR does, and names it by the vector's CID", () => {
    expect(hex(messageCbor(SEND))).toBe(SEND_CBOR)
    expect(hex(encodeMessage(clientMessage(SEND)))).toBe(SEND_CBOR)
    expect(hex(messageCid(SEND).bytes)).toBe(SEND_CID_BYTES)
    expect(hex(chainCid(encodeMessage(clientMessage(SEND))).bytes)).toBe(SEND_CID_BYTES)
  })

  it('reads Lotus JSON (missing Version and Params are zero, as in Go) to the same message on both sides', () => {
    const chain = readJsonMessage(TRANSFER_JSON.Message)
    expect(hex(messageCbor(chain))).toBe(TRANSFER_CBOR)
    expect(hex(encodeMessage(fromLotusMessage(TRANSFER_JSON.Message)))).toBe(TRANSFER_CBOR)
    expect(messageCid(chain).toString()).toBe(TRANSFER_CID)
    expect(chainCid(encodeMessage(fromLotusMessage(TRANSFER_JSON.Message))).toString()).toBe(TRANSFER_CID)
    expect(hex(blake2b(messageCid(chain).bytes, { dkLen: 32 }))).toBe(TRANSFER_PREIMAGE_HASH)
  })

  it("checks the signature and names a secp256k1 message by its signed form's CID, as the client does", () => {
    const signed = readJsonSignedMessage(TRANSFER_JSON)
    expect(verifyMessageSignature(signed)).toBe(true)
    expect(hex(signedMessageCbor(signed))).toBe(SIGNED_TRANSFER_CBOR)
    expect(signedMessageCid(signed).toString()).toBe(SIGNED_TRANSFER_CID)

    const message = fromLotusMessage(TRANSFER_JSON.Message)
    const client = {
      message,
      signature: { type: 1 as const, data: Uint8Array.from(Buffer.from(SIGNATURE_HEX, 'hex')) },
      cid: chainCid(encodeMessage(message)),
    }
    expect(hex(encodeSignedMessage(client))).toBe(SIGNED_TRANSFER_CBOR)
    expect(clientSignedMessageCid(client).toString()).toBe(SIGNED_TRANSFER_CID)
    // What the client sends MpoolPush, read back by the chain, is the same signed message.
    const pushed = readJsonSignedMessage({ Message: toLotusMessage(message), Signature: lotusSignature(client.signature) })
    expect(hex(signedMessageCbor(pushed))).toBe(SIGNED_TRANSFER_CBOR)
  })

  it('refuses a signature altered, by another key, or over another message; a BLS message is known by its own CID', () => {
    const signed = readJsonSignedMessage(TRANSFER_JSON)
    const altered = Uint8Array.from(signed.signature.data)
    altered[3] ^= 1
    expect(verifyMessageSignature({ ...signed, signature: { type: 1, data: altered } })).toBe(false)
    expect(verifyMessageSignature({ ...signed, message: { ...signed.message, nonce: 3 } })).toBe(false)
    expect(verifyMessageSignature({ ...signed, message: { ...signed.message, from: SEND.from } })).toBe(false)
    expect(verifyMessageSignature({ ...signed, signature: { ...signed.signature, type: 2 } })).toBe(false)
    expect(signedMessageCid({ ...signed, signature: { type: 2, data: new Uint8Array(96) } }).toString()).toBe(TRANSFER_CID)
  })

  it('writes Lotus JSON with its CID field, which the client reads back to the same message', () => {
    const json = writeJsonMessage(SEND)
    expect(json).toMatchObject({ Version: 0, Nonce: 78_187_493_520, Value: '1000', GasLimit: 3_333_333_333, Params: null })
    expect(json.CID['/']).toBe(CID.decode(Buffer.from(SEND_CID_BYTES, 'hex')).toString())
    expect(hex(encodeMessage(fromLotusMessage(json)))).toBe(SEND_CBOR)
  })

  it("names the field at fault in JSON it cannot read, and finds what Lotus's mempool refuses", () => {
    expect(() => readJsonMessage({ ...TRANSFER_JSON.Message, Value: 600 })).toThrow(ChainWireError)
    expect(() => readJsonMessage({ ...TRANSFER_JSON.Message, To: 'f1nope' })).toThrow(/^To:/)
    expect(() => readJsonMessage({ ...TRANSFER_JSON.Message, Params: 'not base64!' })).toThrow(/^Params:/)
    expect(() => readJsonSignedMessage({ Message: TRANSFER_JSON.Message })).toThrow(/^Signature:/)
    expect(messageProblem(SEND)).toBeNull()
    expect(messageProblem({ ...SEND, value: -5n })).toBe("'Value' field cannot be negative")
    expect(messageProblem({ ...SEND, version: 1 })).toBe("'Version' unsupported")
    // Trust Wallet's vector pays a premium (800 FIL) above its fee cap (700 FIL): well formed, but no node would take it.
    expect(messageProblem(readJsonMessage(TRANSFER_JSON.Message))).toBe("'GasFeeCap' less than 'GasPremium'")
  })
})
