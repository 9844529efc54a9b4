import { secp256k1 } from '@noble/curves/secp256k1.js'
import { blake2b } from '@noble/hashes/blake2.js'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { formatAddress, parseAddress, type AddressNetwork } from '../../shared/address.ts'

/** A Filecoin signature: type 1 is secp256k1, 65 bytes r ‖ s ‖ recovery id. */
export interface Signature {
  type: 1
  data: Uint8Array
}

/** Signs for one f1/t1 address; the private key never leaves it. */
export interface Signer {
  readonly address: string
  sign(payload: Uint8Array): Promise<Signature>
}

export const SIGNATURE_SECP256K1 = 1

/** The f1/t1 address of a secp256k1 key: blake2b-160 of its uncompressed public key. */
export function secp256k1Address(privateKey: Uint8Array, network: AddressNetwork): string {
  const publicKey = secp256k1.getPublicKey(privateKey, false)
  return formatAddress(network, 1, blake2b(publicKey, { dkLen: 20 }))
}

/**
 * The Ethereum (FEVM) address of a secp256k1 key, EIP-55 checksummed: the last
 * 20 bytes of keccak-256 of its uncompressed public key without the 0x04 prefix.
 * The Onchain Cloud's contracts know the gateway by it.
 */
export function ethereumAddress(privateKey: Uint8Array): `0x${string}` {
  const digest = keccak_256(secp256k1.getPublicKey(privateKey, false).subarray(1)).subarray(12)
  const lower = Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('')
  const mixed = keccak_256(new TextEncoder().encode(lower))
  return `0x${[...lower].map((c, i) => (((mixed[i >> 1] >> (i % 2 ? 0 : 4)) & 0xf) >= 8 ? c.toUpperCase() : c)).join('')}`
}

/** A new random secp256k1 private key (32 bytes, from the OS's CSPRNG via noble). */
export function newPrivateKey(): Uint8Array {
  return secp256k1.utils.randomSecretKey()
}

/**
 * Signs as Filecoin does (Lotus's sigs/secp): ECDSA over blake2b-256 of the
 * payload, deterministic k (RFC 6979), the recovery id appended.
 */
export function createSigner(privateKey: Uint8Array, network: AddressNetwork): Signer {
  if (!secp256k1.utils.isValidSecretKey(privateKey)) throw new Error('not a valid secp256k1 private key')
  const key = Uint8Array.from(privateKey)
  return {
    address: secp256k1Address(key, network),
    async sign(payload) {
      // noble's "recovered" format is recovery ‖ r ‖ s; Filecoin puts the recovery id last.
      const recovered = secp256k1.sign(blake2b(payload, { dkLen: 32 }), key, { prehash: false, format: 'recovered' })
      const data = new Uint8Array(65)
      data.set(recovered.subarray(1), 0)
      data[64] = recovered[0]
      return { type: SIGNATURE_SECP256K1, data }
    },
  }
}

/** Whether `signature` over `payload` was made by the key of the f1/t1 `address` (public key recovered, as the chain does). */
export function verifySignature(address: string, payload: Uint8Array, signature: Signature): boolean {
  const parsed = parseAddress(address)
  if (!parsed.ok || parsed.address.protocol !== 1 || signature.type !== SIGNATURE_SECP256K1 || signature.data.length !== 65) return false
  const recovery = signature.data[64]
  if (recovery > 3) return false
  try {
    const recovered = new Uint8Array(65)
    recovered[0] = recovery
    recovered.set(signature.data.subarray(0, 64), 1)
    const publicKey = secp256k1.recoverPublicKey(recovered, blake2b(payload, { dkLen: 32 }), { prehash: false })
    const uncompressed = secp256k1.Point.fromBytes(publicKey).toBytes(false)
    return formatAddress(parsed.address.network, 1, blake2b(uncompressed, { dkLen: 20 })) === parsed.address.text
  } catch {
    return false
  }
}

/** A signature as CBOR carries it (crypto.Signature): the type byte, then the signature bytes. */
export function signatureBytes(signature: Signature): Uint8Array {
  const out = new Uint8Array(1 + signature.data.length)
  out[0] = signature.type
  out.set(signature.data, 1)
  return out
}
