import * as dagCbor from '@ipld/dag-cbor'
import { blake2b } from '@noble/hashes/blake2.js'
import { CID } from 'multiformats/cid'
import * as Digest from 'multiformats/hashes/digest'
import { addressBytesOf, parseAddress } from '../../shared/address.ts'
import { verifySecp256k1 } from './provider-wire.ts'

/**
 * Chain messages as the simulated chain reads and writes them, written from
 * the Go sources and NOT shared with the client (server/network/wallet,
 * server/network/lotus), so that a disagreement between the two shows up as a
 * refused push or another CID instead of cancelling out:
 * - lotus chain/types/message.go: types.Message, its JSON (the Go field names,
 *   a `CID` field added when Lotus writes one) and its validity checks
 *   (ValidForBlockInclusion);
 * - lotus chain/types/cbor_gen.go: Message.MarshalCBOR, the 10-tuple
 *   [Version, To, From, Nonce, Value, GasLimit, GasFeeCap, GasPremium, Method, Params];
 * - go-state-types big/int.go: a big.Int in CBOR is a byte string, empty for
 *   zero, else a sign byte (0 positive, 1 negative) and the big-endian magnitude;
 *   in JSON a decimal string;
 * - go-state-types crypto/signature.go: a signature in CBOR is the bytes
 *   type ‖ data, in JSON {Type, Data (base64)}; type 1 secp256k1, 2 BLS;
 * - lotus chain/types/signedmessage.go: SignedMessage.Cid(), the CID of the
 *   CBOR [message, signature] for secp256k1, the bare message's for BLS.
 */

/** A message as the simulated chain holds it (lotus chain/types/message.go, types.Message). */
export interface ChainMessage {
  version: number
  to: string
  from: string
  nonce: number
  value: bigint
  gasLimit: number
  gasFeeCap: bigint
  gasPremium: bigint
  method: number
  params: Uint8Array
}

export interface ChainSignature {
  type: number
  data: Uint8Array
}

export interface ChainSignedMessage {
  message: ChainMessage
  signature: ChainSignature
}

/** go-state-types crypto/signature.go SigType. */
export const SIG_SECP256K1 = 1
export const SIG_BLS = 2

/** The storage market actor's ID (go-state-types builtin/singletons.go StorageMarketActorAddr, f05). */
export const STORAGE_MARKET_ACTOR_ID = 5n
/** MethodsMarket.AddBalance and PublishStorageDeals (go-state-types builtin/methods.go). */
export const METHOD_ADD_BALANCE = 2
export const METHOD_PUBLISH_STORAGE_DEALS = 4

/** A JSON message or signature the chain cannot read; `field` names the Go field at fault. */
export class ChainWireError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`)
    this.name = 'ChainWireError'
  }
}

const BLAKE2B_256 = 0xb220
const MAX_UINT64 = 2n ** 64n - 1n
const MAX_INT64 = 2n ** 63n - 1n

/** The CID the chain gives CBOR it stores (go-state-types abi.CidBuilder): CIDv1, dag-cbor (0x71), blake2b-256 (0xb220). */
export function cborCid(bytes: Uint8Array): CID {
  return CID.create(1, 0x71, Digest.create(BLAKE2B_256, blake2b(bytes, { dkLen: 32 })))
}

/** go-state-types big.Int's CBOR bytes: empty for zero, else sign byte then magnitude, big-endian. */
export function bigIntCbor(value: bigint): Uint8Array {
  if (value === 0n) return new Uint8Array(0)
  const magnitude = value < 0n ? -value : value
  const hex = magnitude.toString(16)
  const bytes = Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex')
  const out = new Uint8Array(bytes.length + 1)
  out[0] = value < 0n ? 1 : 0
  out.set(bytes, 1)
  return out
}

/** The message's CBOR, as Lotus's Message.MarshalCBOR writes it (a 10-element array, 0x8a). */
export function messageCbor(m: ChainMessage): Uint8Array {
  return dagCbor.encode(messageTuple(m))
}

// dag-cbor writes integers and byte-string heads in their shortest form, as cbor-gen does;
// a negative GasLimit becomes major type 1 as cbor-gen writes an int64.
const messageTuple = (m: ChainMessage) => [
  m.version,
  addressBytesOf(m.to),
  addressBytesOf(m.from),
  m.nonce,
  bigIntCbor(m.value),
  m.gasLimit,
  bigIntCbor(m.gasFeeCap),
  bigIntCbor(m.gasPremium),
  m.method,
  m.params,
]

/** The signed message's CBOR: [message, signature as type ‖ data] (lotus chain/types/cbor_gen.go SignedMessage). */
export function signedMessageCbor(sm: ChainSignedMessage): Uint8Array {
  const signature = new Uint8Array(1 + sm.signature.data.length)
  signature[0] = sm.signature.type
  signature.set(sm.signature.data, 1)
  return dagCbor.encode([messageTuple(sm.message), signature])
}

export const messageCid = (m: ChainMessage): CID => cborCid(messageCbor(m))

/** What a node knows a signed message by, and answers MpoolPush with (lotus chain/types/signedmessage.go, Cid()). */
export function signedMessageCid(sm: ChainSignedMessage): CID {
  return sm.signature.type === SIG_BLS ? messageCid(sm.message) : cborCid(signedMessageCbor(sm))
}

/**
 * Whether the signature is the sender's over the message's CID bytes (lotus
 * chain/messagepool/messagepool.go VerifyMsgSig: the signed payload is
 * Message.Cid().Bytes()). The
 * simulation checks secp256k1 only: a BLS signature is refused.
 */
export function verifyMessageSignature(sm: ChainSignedMessage): boolean {
  if (sm.signature.type !== SIG_SECP256K1) return false
  return verifySecp256k1(sm.message.from, messageCid(sm.message).bytes, sm.signature)
}

/**
 * Why Lotus's mempool would not take the message, in its words
 * (lotus chain/types/message.go ValidForBlockInclusion), or null.
 * The gas floor (the cost of storing the message) is not simulated.
 */
export function messageProblem(m: ChainMessage): string | null {
  if (m.version !== 0) return "'Version' unsupported"
  if (m.value < 0n) return "'Value' field cannot be negative"
  if (m.gasFeeCap < 0n) return "'GasFeeCap' field cannot be negative"
  if (m.gasPremium < 0n) return "'GasPremium' field cannot be negative"
  if (m.gasPremium > m.gasFeeCap) return "'GasFeeCap' less than 'GasPremium'"
  if (m.gasLimit < 0) return "'GasLimit' field cannot be negative"
  return null
}

/**
 * Reads a message in Lotus's JSON. As Go's encoding/json does, a missing
 * Version, Nonce, GasLimit, Method or Params is its zero value; a missing
 * address or amount cannot make a valid message (an undefined address, a nil
 * big.Int), so it is refused here.
 */
export function readJsonMessage(v: unknown): ChainMessage {
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new ChainWireError('Message', 'expected a JSON object')
  const m = v as Record<string, unknown>
  return {
    version: jsonUint(m, 'Version', MAX_UINT64),
    to: jsonAddress(m, 'To'),
    from: jsonAddress(m, 'From'),
    nonce: jsonUint(m, 'Nonce', MAX_UINT64),
    value: jsonBigInt(m, 'Value'),
    gasLimit: jsonInt64(m, 'GasLimit'),
    gasFeeCap: jsonBigInt(m, 'GasFeeCap'),
    gasPremium: jsonBigInt(m, 'GasPremium'),
    method: jsonUint(m, 'Method', MAX_UINT64),
    params: jsonBytes(m, 'Params'),
  }
}

/** A message in Lotus's JSON, with the `CID` field Lotus's Message.MarshalJSON adds. */
export function writeJsonMessage(m: ChainMessage) {
  return {
    Version: m.version,
    To: m.to,
    From: m.from,
    Nonce: m.nonce,
    Value: m.value.toString(),
    GasLimit: m.gasLimit,
    GasFeeCap: m.gasFeeCap.toString(),
    GasPremium: m.gasPremium.toString(),
    Method: m.method,
    // Go's encoding/json writes a nil []byte as null, any other as base64.
    Params: m.params.length > 0 ? Buffer.from(m.params).toString('base64') : null,
    CID: { '/': messageCid(m).toString() },
  }
}

/** Reads a signed message in Lotus's JSON: {Message, Signature: {Type, Data}}. */
export function readJsonSignedMessage(v: unknown): ChainSignedMessage {
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new ChainWireError('SignedMessage', 'expected a JSON object')
  const sm = v as Record<string, unknown>
  const message = readJsonMessage(sm.Message)
  const s = sm.Signature
  if (!s || typeof s !== 'object' || Array.isArray(s)) throw new ChainWireError('Signature', 'expected {Type, Data}')
  const sig = s as Record<string, unknown>
  const type = jsonUint(sig, 'Type', 255n)
  return { message, signature: { type, data: jsonBytes(sig, 'Data') } }
}

function jsonAddress(m: Record<string, unknown>, field: string): string {
  const text = m[field]
  if (typeof text !== 'string') throw new ChainWireError(field, 'expected an address string')
  const parsed = parseAddress(text)
  if (!parsed.ok) throw new ChainWireError(field, parsed.reason)
  return text
}

/** A JSON number Go decodes into a uint64 (and the simulation keeps as a safe integer). */
function jsonUint(m: Record<string, unknown>, field: string, max: bigint): number {
  const n = m[field] ?? 0
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || BigInt(n) > max)
    throw new ChainWireError(field, 'expected an unsigned integer')
  if (!Number.isSafeInteger(n)) throw new ChainWireError(field, 'too large for the simulated chain')
  return n
}

function jsonInt64(m: Record<string, unknown>, field: string): number {
  const n = m[field] ?? 0
  if (typeof n !== 'number' || !Number.isInteger(n) || BigInt(n) > MAX_INT64 || BigInt(n) < -MAX_INT64 - 1n)
    throw new ChainWireError(field, 'expected an integer')
  if (!Number.isSafeInteger(n)) throw new ChainWireError(field, 'too large for the simulated chain')
  return n
}

/** go-state-types big.Int in JSON: a quoted decimal, signed. */
function jsonBigInt(m: Record<string, unknown>, field: string): bigint {
  const text = m[field]
  if (typeof text !== 'string' || !/^-?[0-9]{1,80}$/.test(text)) throw new ChainWireError(field, 'expected a decimal big integer string')
  return BigInt(text)
}

/** A Go []byte in JSON: standard base64, or null / absent for none. */
function jsonBytes(m: Record<string, unknown>, field: string): Uint8Array {
  const text = m[field]
  if (text === null || text === undefined) return new Uint8Array(0)
  if (typeof text !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0)
    throw new ChainWireError(field, 'expected base64')
  return Uint8Array.from(Buffer.from(text, 'base64'))
}
