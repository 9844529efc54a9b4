import * as dagCbor from '@ipld/dag-cbor'
import { blake2b } from '@noble/hashes/blake2.js'
import { CID } from 'multiformats/cid'
import * as Digest from 'multiformats/hashes/digest'
import { addressBytesOf } from '../../shared/address.ts'
import { signatureBytes, type Signature, type Signer } from './keys.ts'

/** A Filecoin message, amounts in attoFIL. */
export interface Message {
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

export interface SignedMessage {
  message: Message
  signature: Signature
  /** The unsigned message's CID: what the signature is over (and, for BLS only, the signed message's CID too). */
  cid: CID
}

const BLAKE2B_256 = 0xb220

/** A big integer as the chain's CBOR carries it: empty for zero, else a sign byte (0: positive) and the magnitude, big-endian. */
export function bigIntBytes(value: bigint): Uint8Array {
  if (value < 0n) throw new RangeError('amounts are not negative')
  if (value === 0n) return new Uint8Array(0)
  const hex = value.toString(16)
  return Uint8Array.from(Buffer.from(`00${hex.length % 2 ? '0' : ''}${hex}`, 'hex'))
}

/** The message as a CBOR tuple, in the field order of Lotus's types.Message (version 0). */
export function encodeMessage(m: Message): Uint8Array {
  return dagCbor.encode([
    0,
    addressBytesOf(m.to),
    addressBytesOf(m.from),
    m.nonce,
    bigIntBytes(m.value),
    m.gasLimit,
    bigIntBytes(m.gasFeeCap),
    bigIntBytes(m.gasPremium),
    m.method,
    m.params,
  ])
}

/** The CID of CBOR bytes on chain: CIDv1, dag-cbor, blake2b-256. */
export function chainCid(bytes: Uint8Array): CID {
  return CID.create(1, dagCbor.code, Digest.create(BLAKE2B_256, blake2b(bytes, { dkLen: 32 })))
}

/** Signs a message as Lotus does: the signature is over the bytes of its CID. */
export async function signMessage(signer: Signer, message: Message): Promise<SignedMessage> {
  if (message.from !== signer.address) throw new Error(`the message is from ${message.from}, the key is ${signer.address}`)
  const cid = chainCid(encodeMessage(message))
  return { message, signature: await signer.sign(cid.bytes), cid }
}

/** The signed message as a CBOR tuple [message, signature bytes], as MpoolPush's peers exchange it. */
export function encodeSignedMessage(s: SignedMessage): Uint8Array {
  return dagCbor.encode([dagCbor.decode(encodeMessage(s.message)), signatureBytes(s.signature)])
}

/**
 * The CID a node knows a signed message by, and answers MpoolPush with: for
 * BLS the unsigned message's (its signature is aggregated into the block), for
 * secp256k1 that of the whole signed message's CBOR (lotus chain/types/signedmessage.go, Cid()).
 */
export function signedMessageCid(s: SignedMessage): CID {
  return (s.signature.type as number) === SIGNATURE_BLS ? s.cid : chainCid(encodeSignedMessage(s))
}

const SIGNATURE_BLS = 2
