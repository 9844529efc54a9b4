import { blake2b } from '@noble/hashes/blake2.js'
import type { NetworkName } from './contracts/network.ts'

/**
 * Filecoin addresses (go-address / FIP-0048): `<network><protocol><payload>`.
 *   f0<decimal id>                          ID address, id < 2^63
 *   f1<base32(20-byte hash ‖ checksum)>      secp256k1
 *   f2<base32(20-byte hash ‖ checksum)>      actor
 *   f3<base32(48-byte BLS key ‖ checksum)>   BLS
 *   f4<namespace>f<base32(subaddr ‖ checksum)> delegated (f410f… = Ethereum)
 * The checksum is blake2b with a 4-byte digest over protocol byte ‖ payload
 * (for f4 the payload is leb128(namespace) ‖ subaddress).
 */
export type AddressNetwork = 'mainnet' | 'testnet'
export type AddressProtocol = 0 | 1 | 2 | 3 | 4

export interface FilecoinAddress {
  network: AddressNetwork
  protocol: AddressProtocol
  /** The canonical lowercase string form. */
  text: string
  /** For f0 addresses the actor id as a decimal string. */
  id?: string
  /** For f4 addresses the address manager's actor id. */
  namespace?: string
  payload: Uint8Array
}

export type AddressParseResult = { ok: true; address: FilecoinAddress } | { ok: false; reason: string }

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567'
const MAX_ID = (1n << 63n) - 1n
const CHECKSUM_BYTES = 4
// Longest f4 subaddress the actors accept (FIP-0048).
const MAX_SUBADDRESS_BYTES = 54

/** Parses and validates a Filecoin address string, checksum included. */
export function parseAddress(input: string): AddressParseResult {
  if (typeof input !== 'string' || input.length < 3 || input.length > 200) return fail('not a Filecoin address')
  const netChar = input[0]
  if (netChar !== 'f' && netChar !== 't') return fail('must start with f (mainnet) or t (testnet)')
  const network: AddressNetwork = netChar === 'f' ? 'mainnet' : 'testnet'
  const protoChar = input[1]
  if (!/^[0-4]$/.test(protoChar)) return fail('unknown address protocol (expected 0-4)')
  const protocol = Number(protoChar) as AddressProtocol
  const rest = input.slice(2)

  if (protocol === 0) {
    const id = parseDecimalId(rest)
    if (id === undefined) return fail('ID address must be a decimal number below 2^63')
    return ok({ network, protocol, text: input, id: id.toString(), payload: leb128(id) })
  }

  if (protocol === 4) {
    const sep = rest.indexOf('f')
    if (sep <= 0) return fail('delegated address must look like f4<namespace>f<subaddress>')
    const ns = parseDecimalId(rest.slice(0, sep))
    if (ns === undefined) return fail('delegated address namespace must be a decimal actor id')
    const bytes = base32Decode(rest.slice(sep + 1))
    if (!bytes || bytes.length <= CHECKSUM_BYTES) return fail('delegated address payload is not valid base32')
    const sub = bytes.subarray(0, bytes.length - CHECKSUM_BYTES)
    if (sub.length > MAX_SUBADDRESS_BYTES) return fail('delegated subaddress is too long')
    const payload = concat(leb128(ns), sub)
    if (!checksumMatches(protocol, payload, bytes.subarray(bytes.length - CHECKSUM_BYTES))) return fail('checksum does not match')
    if (base32Encode(bytes) !== rest.slice(sep + 1)) return fail('not a canonical base32 encoding')
    return ok({ network, protocol, text: input, namespace: ns.toString(), payload })
  }

  const expected = protocol === 3 ? 48 : 20
  const bytes = base32Decode(rest)
  if (!bytes || bytes.length !== expected + CHECKSUM_BYTES) return fail(`payload must be ${expected} bytes plus a 4-byte checksum`)
  const payload = bytes.subarray(0, expected)
  if (!checksumMatches(protocol, payload, bytes.subarray(expected))) return fail('checksum does not match')
  // Reject non-canonical encodings (stray trailing bits) so one address has one spelling.
  if (base32Encode(bytes) !== rest) return fail('not a canonical base32 encoding')
  return ok({ network, protocol, text: input, payload })
}

/**
 * The one rule for which addresses a service takes: `t…` on a testnet
 * (calibration), `f…` on mainnet and on the simulated network; the reason
 * names the mismatch, since a copied address from the other network is the
 * usual mistake.
 */
export function parseAddressOn(input: string, network: AddressNetwork): AddressParseResult {
  const r = parseAddress(input)
  if (!r.ok || r.address.network === network) return r
  return network === 'mainnet'
    ? fail('a testnet address (t…), but this service runs on mainnet: use the f… address')
    : fail('a mainnet address (f…), but this service runs on a testnet: use the t… address')
}

/**
 * Which addresses a network uses: `t…` on calibration and on a devnet (Lotus
 * builds other than mainnet's print testnet addresses), `f…` on mainnet and
 * the simulated network.
 */
export const addressNetworkOf = (network: NetworkName): AddressNetwork =>
  network === 'calibration' || network === 'devnet' ? 'testnet' : 'mainnet'

/** True for a valid ID (f0/t0) address, the "short address" of a provider. */
export function isIdAddress(input: string): boolean {
  const r = parseAddress(input)
  return r.ok && r.address.protocol === 0
}

/** Builds the string of an f1/f2/f3 address from its payload (used by the simulated network). */
export function formatAddress(network: AddressNetwork, protocol: 1 | 2 | 3, payload: Uint8Array): string {
  const sum = checksum(protocol, payload)
  return `${network === 'mainnet' ? 'f' : 't'}${protocol}${base32Encode(concat(payload, sum))}`
}

/** The Ethereum address manager's actor id: f410f… addresses are Ethereum accounts (FIP-0055). */
export const EAM_NAMESPACE = 10

/**
 * The f410f/t410f address of a 20-byte Ethereum address: the same account seen
 * from Filecoin, where FIL for an FEVM account is sent (FIP-0048, FIP-0055).
 */
export function delegatedAddress(network: AddressNetwork, ethAddress: Uint8Array): string {
  if (ethAddress.length !== 20) throw new RangeError('an Ethereum address has 20 bytes')
  const sum = checksum(4, concat(leb128(BigInt(EAM_NAMESPACE)), ethAddress))
  return `${network === 'mainnet' ? 'f' : 't'}4${EAM_NAMESPACE}f${base32Encode(concat(ethAddress, sum))}`
}

/** An address as the chain's CBOR carries it: protocol byte ‖ payload. */
export function addressBytes(address: FilecoinAddress): Uint8Array {
  return concat(Uint8Array.of(address.protocol), address.payload)
}

/** The CBOR bytes of an address given as text; a RangeError saying why when it is not one. */
export function addressBytesOf(text: string): Uint8Array {
  const parsed = parseAddress(text)
  if (!parsed.ok) throw new RangeError(`${text}: ${parsed.reason}`)
  return addressBytes(parsed.address)
}

/** The string of an address read from the chain's CBOR (protocol byte ‖ payload); null when the bytes are not one. */
export function addressFromBytes(bytes: Uint8Array, network: AddressNetwork): string | null {
  const protocol = bytes[0]
  const payload = bytes.subarray(1)
  const prefix = network === 'mainnet' ? 'f' : 't'
  if (protocol === 0) {
    let id = 0n
    let shift = 0n
    for (const [i, byte] of payload.entries()) {
      id |= BigInt(byte & 0x7f) << shift
      shift += 7n
      if (!(byte & 0x80)) return i === payload.length - 1 && id <= MAX_ID ? `${prefix}0${id}` : null
    }
    return null
  }
  if ((protocol === 1 || protocol === 2) && payload.length === 20) return formatAddress(network, protocol, payload)
  if (protocol === 3 && payload.length === 48) return formatAddress(network, protocol, payload)
  return null
}

function ok(address: FilecoinAddress): AddressParseResult {
  return { ok: true, address }
}
function fail(reason: string): AddressParseResult {
  return { ok: false, reason }
}

function parseDecimalId(text: string): bigint | undefined {
  // No leading zeros except "0" itself: one id, one spelling.
  if (!/^(0|[1-9][0-9]{0,18})$/.test(text)) return undefined
  const id = BigInt(text)
  return id <= MAX_ID ? id : undefined
}

function checksum(protocol: number, payload: Uint8Array): Uint8Array {
  return blake2b(concat(Uint8Array.of(protocol), payload), { dkLen: CHECKSUM_BYTES })
}

function checksumMatches(protocol: number, payload: Uint8Array, given: Uint8Array): boolean {
  const want = checksum(protocol, payload)
  return want.every((b, i) => b === given[i])
}

function leb128(value: bigint): Uint8Array {
  const out: number[] = []
  let v = value
  do {
    let byte = Number(v & 0x7fn)
    v >>= 7n
    if (v > 0n) byte |= 0x80
    out.push(byte)
  } while (v > 0n)
  return Uint8Array.from(out)
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length)
  out.set(a, 0)
  out.set(b, a.length)
  return out
}

/** RFC 4648 base32, lowercase, no padding. */
export function base32Encode(bytes: Uint8Array): string {
  let out = ''
  let bits = 0
  let value = 0
  for (const byte of bytes) {
    value = (value << 8) | byte
    bits += 8
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31]
      bits -= 5
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31]
  return out
}

function base32Decode(text: string): Uint8Array | undefined {
  if (text.length === 0) return undefined
  const out: number[] = []
  let bits = 0
  let value = 0
  for (const ch of text) {
    const idx = ALPHABET.indexOf(ch)
    if (idx < 0) return undefined
    value = ((value << 5) | idx) & 0xffff
    bits += 5
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff)
      bits -= 8
    }
  }
  return Uint8Array.from(out)
}
