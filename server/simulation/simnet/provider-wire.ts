import * as dagCbor from '@ipld/dag-cbor'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { blake2b } from '@noble/hashes/blake2.js'
import { decodeFirst } from 'cborg'
import { CID } from 'multiformats/cid'
import * as Digest from 'multiformats/hashes/digest'
import { addressBytesOf, addressFromBytes, formatAddress, parseAddress } from '../../shared/address.ts'
import type { DealProposal } from '../../shared/chain.ts'

/**
 * The storage market messages as the simulated providers read and write
 * them, written from the Go sources and NOT shared with the client, so that
 * a disagreement between the two shows up instead of cancelling out:
 * - boost storagemarket/types/types_cbor_gen.go: DealParams (mk 1.2.1),
 *   DealParamsV120 (mk 1.2.0), Transfer, DealResponse, DealStatusRequest,
 *   DealStatusResponse, DealStatus: CBOR maps keyed by the Go field names,
 *   cbor-gen writing the keys shortest first, then bytewise (DAG-CBOR's
 *   canonical order, so dag-cbor's encoder writes the same bytes);
 * - boost storagemarket/types/legacytypes/types_cbor_gen.go and
 *   legacytypes/network/types_cbor_gen.go: StorageAsk (8 fields),
 *   SignedStorageAsk, AskRequest, AskResponse;
 * - boost retrievalmarket/types/transports.ipldsch: QueryResponse
 *   {Protocols [{Name, Addresses [bytes]}]};
 * - go-state-types builtin/v9/market/cbor_gen.go: DealProposal, an
 *   11-element tuple, and ClientDealProposal, [proposal, signature].
 * cbor-gen readers ignore fields they do not know and leave missing ones at
 * their zero value; these decoders do the same, but reject a field of the
 * wrong CBOR type as cbor-gen does.
 */

export const PROVIDER_PROTOCOLS = {
  ask: '/fil/storage/ask/1.1.0',
  dealV121: '/fil/storage/mk/1.2.1',
  dealV120: '/fil/storage/mk/1.2.0',
  status: '/fil/storage/status/1.2.0',
  transports: '/fil/retrieval/transports/1.0.0',
} as const

export class ProviderWireError extends Error {
  override name = 'ProviderWireError'
}

/** crypto.Signature as CBOR carries it: one type byte (1 secp256k1, 2 BLS), then the signature. */
export interface WireSignature {
  type: number
  data: Uint8Array
}

export interface ClientDealProposal {
  proposal: DealProposal
  /** The proposal as it arrived (the 11-tuple), re-encoded for the signature check as cbor-gen re-marshals it. */
  proposalTuple: unknown[]
  signature: WireSignature
}

export interface WireTransfer {
  type: string
  clientId: string
  params: Uint8Array
  size: number
}

export interface WireDealParams {
  dealUuid: string
  isOffline: boolean
  clientDealProposal: ClientDealProposal
  dealDataRoot: CID
  transfer: WireTransfer
  /** mk 1.2.1 only; false when absent (1.2.0). */
  skipIpniAnnounce: boolean
  removeUnsealedCopy: boolean
}

export interface WireDealStatus {
  error: string
  status: string
  sealingStatus: string
  proposal: DealProposal
  signedProposalCid: CID
  publishCid: CID | null
  chainDealId: number
}

export interface WireDealStatusResponse {
  dealUuid: string
  error: string
  dealStatus: WireDealStatus | null
  isOffline: boolean
  transferSize: number
  nBytesReceived: number
}

export interface WireStorageAsk {
  /** attoFIL per GiB per epoch */
  price: bigint
  verifiedPrice: bigint
  minPieceSize: number
  maxPieceSize: number
  miner: string
  timestamp: number
  expiry: number
  seqNo: number
}

// ---- reading a stream's bytes -------------------------------------------------

// cbor-gen does not insist on canonical form; only the shape matters to it. Tag 42 is read as a CID.
const decodeOptions = { ...dagCbor.decodeOptions, strict: false }

/** One CBOR value from the front of `bytes`; null while the value is incomplete. */
export function decodeOne(bytes: Uint8Array): { value: unknown; rest: Uint8Array } | null {
  try {
    const [value, rest] = decodeFirst(bytes, decodeOptions)
    return { value, rest }
  } catch (err) {
    if (err instanceof Error && /unexpected end|not enough data/i.test(err.message)) return null
    throw new ProviderWireError(`not CBOR: ${err instanceof Error ? err.message : String(err)}`)
  }
}

export const encode = (value: unknown): Uint8Array => dagCbor.encode(value)

// ---- field readers, cbor-gen's types ------------------------------------------

const isMap = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array) && !CID.asCID(v)

function struct(v: unknown, what: string): Record<string, unknown> {
  if (!isMap(v)) throw new ProviderWireError(`${what}: expected a CBOR map`)
  return v
}
function tuple(v: unknown, what: string, n: number): unknown[] {
  if (!Array.isArray(v) || v.length !== n) throw new ProviderWireError(`${what}: expected a CBOR array of ${n}`)
  return v
}
function byteString(v: unknown, what: string, fallback?: Uint8Array): Uint8Array {
  if (v === undefined && fallback) return fallback
  if (!(v instanceof Uint8Array)) throw new ProviderWireError(`${what}: expected a byte string`)
  return v
}
function textString(v: unknown, what: string, fallback?: string): string {
  if (v === undefined && fallback !== undefined) return fallback
  if (typeof v !== 'string') throw new ProviderWireError(`${what}: expected a text string`)
  return v
}
function boolean(v: unknown, what: string, fallback?: boolean): boolean {
  if (v === undefined && fallback !== undefined) return fallback
  if (typeof v !== 'boolean') throw new ProviderWireError(`${what}: expected a boolean`)
  return v
}
function uint64(v: unknown, what: string, fallback?: number): number {
  if (v === undefined && fallback !== undefined) return fallback
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw new ProviderWireError(`${what}: expected an unsigned integer`)
  return v
}
function int64(v: unknown, what: string, fallback?: number): number {
  if (v === undefined && fallback !== undefined) return fallback
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw new ProviderWireError(`${what}: expected an integer`)
  return v
}
function cidField(v: unknown, what: string): CID {
  const c = CID.asCID(v)
  if (!c) throw new ProviderWireError(`${what}: expected a CID (tag 42)`)
  return c
}
function addressField(v: unknown, what: string): string {
  const a = addressFromBytes(byteString(v, what), 'mainnet')
  if (!a) throw new ProviderWireError(`${what}: not a Filecoin address`)
  return a
}
/** go-state-types big.Int: empty for zero, else a sign byte (0 positive, 1 negative) and the big-endian magnitude. */
export function decodeBigInt(v: unknown, what: string): bigint {
  const b = byteString(v, what)
  if (b.length === 0) return 0n
  if (b[0] !== 0 && b[0] !== 1) throw new ProviderWireError(`${what}: bad big.Int sign byte`)
  const magnitude = b.length === 1 ? 0n : BigInt(`0x${Buffer.from(b.subarray(1)).toString('hex')}`)
  return b[0] === 1 ? -magnitude : magnitude
}
export function encodeBigInt(n: bigint): Uint8Array {
  if (n === 0n) return new Uint8Array(0)
  const magnitude = n < 0n ? -n : n
  let hex = magnitude.toString(16)
  if (hex.length % 2) hex = `0${hex}`
  return Uint8Array.from([n < 0n ? 1 : 0, ...Buffer.from(hex, 'hex')])
}
/** uuid.UUID: cbor-gen writes the [16]byte array as a 16-byte string. */
function uuidField(v: unknown, what: string): string {
  const b = byteString(v, what)
  if (b.length !== 16) throw new ProviderWireError(`${what}: a UUID is 16 bytes, got ${b.length}`)
  const h = Buffer.from(b).toString('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}
export function uuidToBytes(uuid: string): Uint8Array {
  const hex = uuid.replace(/-/g, '')
  if (!/^[0-9a-f]{32}$/i.test(hex)) throw new ProviderWireError(`not a UUID: ${uuid}`)
  return Uint8Array.from(Buffer.from(hex, 'hex'))
}
function signatureField(v: unknown, what: string): WireSignature {
  const b = byteString(v, what)
  if (b.length < 1) throw new ProviderWireError(`${what}: empty signature`)
  return { type: b[0], data: b.slice(1) }
}
export const signatureToBytes = (s: WireSignature): Uint8Array => Uint8Array.from([s.type, ...s.data])

// ---- go-state-types market.DealProposal / ClientDealProposal ------------------

export function decodeDealProposal(v: unknown): { proposal: DealProposal; tuple: unknown[] } {
  const t = tuple(v, 'DealProposal', 11)
  const label = t[5]
  // DealLabel (FIP-0027): a text string or a byte string.
  if (typeof label !== 'string' && !(label instanceof Uint8Array))
    throw new ProviderWireError('DealProposal.Label: expected a text or byte string')
  const amount = (x: unknown, what: string) => {
    const n = decodeBigInt(x, what)
    if (n < 0n) throw new ProviderWireError(`${what}: negative`)
    return n.toString()
  }
  return {
    tuple: t,
    proposal: {
      PieceCID: { '/': cidField(t[0], 'DealProposal.PieceCID').toString() },
      PieceSize: uint64(t[1], 'DealProposal.PieceSize'),
      VerifiedDeal: boolean(t[2], 'DealProposal.VerifiedDeal'),
      Client: addressField(t[3], 'DealProposal.Client'),
      Provider: addressField(t[4], 'DealProposal.Provider'),
      Label: typeof label === 'string' ? label : Buffer.from(label).toString('utf8'),
      StartEpoch: int64(t[6], 'DealProposal.StartEpoch'),
      EndEpoch: int64(t[7], 'DealProposal.EndEpoch'),
      StoragePricePerEpoch: amount(t[8], 'DealProposal.StoragePricePerEpoch'),
      ProviderCollateral: amount(t[9], 'DealProposal.ProviderCollateral'),
      ClientCollateral: amount(t[10], 'DealProposal.ClientCollateral'),
    },
  }
}

export function dealProposalTuple(p: DealProposal): unknown[] {
  return [
    CID.parse(p.PieceCID['/']),
    p.PieceSize,
    p.VerifiedDeal,
    addressBytesOf(p.Client),
    addressBytesOf(p.Provider),
    p.Label,
    p.StartEpoch,
    p.EndEpoch,
    encodeBigInt(BigInt(p.StoragePricePerEpoch)),
    encodeBigInt(BigInt(p.ProviderCollateral)),
    encodeBigInt(BigInt(p.ClientCollateral)),
  ]
}

export function decodeClientDealProposal(v: unknown): ClientDealProposal {
  const t = tuple(v, 'ClientDealProposal', 2)
  const { proposal, tuple: proposalTuple } = decodeDealProposal(t[0])
  return { proposal, proposalTuple, signature: signatureField(t[1], 'ClientDealProposal.ClientSignature') }
}

/** The bytes a client signs: the proposal as cbor-gen marshals it (boost storagemarket/deal_acceptance.go validateSignature). */
export const proposalSigningBytes = (c: ClientDealProposal): Uint8Array => encode(c.proposalTuple)

/**
 * The signed proposal's CID: CIDv1, dag-cbor, blake2b-256 over the
 * ClientDealProposal's CBOR (go-state-types abi.CidBuilder, used by
 * ClientDealProposal.Cid()).
 */
export function clientDealProposalCid(c: ClientDealProposal): CID {
  const bytes = encode([c.proposalTuple, signatureToBytes(c.signature)])
  return CID.create(1, 0x71, Digest.create(0xb220, blake2b(bytes, { dkLen: 32 })))
}

// ---- boost storagemarket/types: DealParams and friends ------------------------

export function decodeDealParams(v: unknown): WireDealParams {
  const m = struct(v, 'DealParams')
  const t = struct(m.Transfer, 'DealParams.Transfer')
  return {
    dealUuid: uuidField(m.DealUUID, 'DealParams.DealUUID'),
    isOffline: boolean(m.IsOffline, 'DealParams.IsOffline', false),
    clientDealProposal: decodeClientDealProposal(m.ClientDealProposal),
    dealDataRoot: cidField(m.DealDataRoot, 'DealParams.DealDataRoot'),
    transfer: {
      type: textString(t.Type, 'Transfer.Type', ''),
      clientId: textString(t.ClientID, 'Transfer.ClientID', ''),
      params: byteString(t.Params, 'Transfer.Params', new Uint8Array(0)),
      size: uint64(t.Size, 'Transfer.Size', 0),
    },
    skipIpniAnnounce: boolean(m.SkipIPNIAnnounce, 'DealParams.SkipIPNIAnnounce', false),
    removeUnsealedCopy: boolean(m.RemoveUnsealedCopy, 'DealParams.RemoveUnsealedCopy', false),
  }
}

/** `version` 1.2.0 writes DealParamsV120 (five fields); 1.2.1 adds SkipIPNIAnnounce and RemoveUnsealedCopy. */
export function encodeDealParams(d: WireDealParams, version: '1.2.0' | '1.2.1' = '1.2.1'): Uint8Array {
  const m: Record<string, unknown> = {
    DealUUID: uuidToBytes(d.dealUuid),
    Transfer: { Size: d.transfer.size, Type: d.transfer.type, Params: d.transfer.params, ClientID: d.transfer.clientId },
    IsOffline: d.isOffline,
    DealDataRoot: d.dealDataRoot,
    ClientDealProposal: [d.clientDealProposal.proposalTuple, signatureToBytes(d.clientDealProposal.signature)],
  }
  if (version === '1.2.1') {
    m.SkipIPNIAnnounce = d.skipIpniAnnounce
    m.RemoveUnsealedCopy = d.removeUnsealedCopy
  }
  return encode(m)
}

/** Boost's http transfer params: JSON {URL, Headers} (transport/types HttpRequest). */
export function decodeHttpTransferParams(params: Uint8Array): { url: string; headers: Record<string, string> } {
  let json: unknown
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(params))
  } catch {
    throw new ProviderWireError('Transfer.Params: not JSON')
  }
  const j = json as { URL?: unknown; Headers?: unknown }
  const headers = j.Headers ?? {}
  if (typeof j.URL !== 'string' || !isMap(headers) || Object.values(headers).some((h) => typeof h !== 'string')) {
    throw new ProviderWireError('Transfer.Params: expected {URL: string, Headers: {string: string}}')
  }
  return { url: j.URL, headers: headers as Record<string, string> }
}

export const encodeDealResponse = (r: { accepted: boolean; message: string }): Uint8Array =>
  encode({ Message: r.message, Accepted: r.accepted })

export function decodeDealResponse(v: unknown): { accepted: boolean; message: string } {
  const m = struct(v, 'DealResponse')
  return { accepted: boolean(m.Accepted, 'DealResponse.Accepted', false), message: textString(m.Message, 'DealResponse.Message', '') }
}

export function decodeDealStatusRequest(v: unknown): { dealUuid: string; signature: WireSignature } {
  const m = struct(v, 'DealStatusRequest')
  return {
    dealUuid: uuidField(m.DealUUID, 'DealStatusRequest.DealUUID'),
    signature: signatureField(m.Signature, 'DealStatusRequest.Signature'),
  }
}

export const encodeDealStatusRequest = (r: { dealUuid: string; signature: WireSignature }): Uint8Array =>
  encode({ DealUUID: uuidToBytes(r.dealUuid), Signature: signatureToBytes(r.signature) })

export function encodeDealStatusResponse(r: WireDealStatusResponse): Uint8Array {
  const s = r.dealStatus
  return encode({
    Error: r.error,
    DealUUID: uuidToBytes(r.dealUuid),
    IsOffline: r.isOffline,
    // A nil *DealStatus is CBOR null.
    DealStatus: s && {
      Error: s.error,
      Status: s.status,
      Proposal: dealProposalTuple(s.proposal),
      PublishCid: s.publishCid,
      ChainDealID: s.chainDealId,
      SealingStatus: s.sealingStatus,
      SignedProposalCid: s.signedProposalCid,
    },
    TransferSize: r.transferSize,
    NBytesReceived: r.nBytesReceived,
  })
}

export function decodeDealStatusResponse(v: unknown): WireDealStatusResponse {
  const m = struct(v, 'DealStatusResponse')
  const s = m.DealStatus === null || m.DealStatus === undefined ? null : struct(m.DealStatus, 'DealStatus')
  return {
    dealUuid: uuidField(m.DealUUID, 'DealStatusResponse.DealUUID'),
    error: textString(m.Error, 'DealStatusResponse.Error', ''),
    isOffline: boolean(m.IsOffline, 'DealStatusResponse.IsOffline', false),
    dealStatus: s && {
      error: textString(s.Error, 'DealStatus.Error', ''),
      status: textString(s.Status, 'DealStatus.Status', ''),
      sealingStatus: textString(s.SealingStatus, 'DealStatus.SealingStatus', ''),
      proposal: decodeDealProposal(s.Proposal).proposal,
      signedProposalCid: cidField(s.SignedProposalCid, 'DealStatus.SignedProposalCid'),
      publishCid: s.PublishCid === null || s.PublishCid === undefined ? null : cidField(s.PublishCid, 'DealStatus.PublishCid'),
      chainDealId: uint64(s.ChainDealID, 'DealStatus.ChainDealID', 0),
    },
    transferSize: uint64(m.TransferSize, 'DealStatusResponse.TransferSize', 0),
    nBytesReceived: uint64(m.NBytesReceived, 'DealStatusResponse.NBytesReceived', 0),
  }
}

// ---- the ask (legacytypes) ----------------------------------------------------

export const decodeAskRequest = (v: unknown): string => addressField(struct(v, 'AskRequest').Miner, 'AskRequest.Miner')
export const encodeAskRequest = (miner: string): Uint8Array => encode({ Miner: addressBytesOf(miner) })

const askMap = (a: WireStorageAsk) => ({
  Miner: addressBytesOf(a.miner),
  Price: encodeBigInt(a.price),
  SeqNo: a.seqNo,
  Expiry: a.expiry,
  Timestamp: a.timestamp,
  MaxPieceSize: a.maxPieceSize,
  MinPieceSize: a.minPieceSize,
  VerifiedPrice: encodeBigInt(a.verifiedPrice),
})

/** The StorageAsk's CBOR: what the provider's worker signs. */
export const encodeStorageAsk = (a: WireStorageAsk): Uint8Array => encode(askMap(a))

/** AskResponse{Ask *SignedStorageAsk}: null when the provider has no ask for that miner. */
export const encodeAskResponse = (signed: { ask: WireStorageAsk; signature: WireSignature } | null): Uint8Array =>
  encode({ Ask: signed && { Ask: askMap(signed.ask), Signature: signatureToBytes(signed.signature) } })

export function decodeAskResponse(v: unknown): { ask: WireStorageAsk; signature: WireSignature } | null {
  const m = struct(v, 'AskResponse')
  if (m.Ask === null || m.Ask === undefined) return null
  const signed = struct(m.Ask, 'SignedStorageAsk')
  const a = struct(signed.Ask, 'StorageAsk')
  return {
    ask: {
      price: decodeBigInt(a.Price, 'StorageAsk.Price'),
      verifiedPrice: decodeBigInt(a.VerifiedPrice, 'StorageAsk.VerifiedPrice'),
      minPieceSize: uint64(a.MinPieceSize, 'StorageAsk.MinPieceSize'),
      maxPieceSize: uint64(a.MaxPieceSize, 'StorageAsk.MaxPieceSize'),
      miner: addressField(a.Miner, 'StorageAsk.Miner'),
      timestamp: int64(a.Timestamp, 'StorageAsk.Timestamp', 0),
      expiry: int64(a.Expiry, 'StorageAsk.Expiry', 0),
      seqNo: uint64(a.SeqNo, 'StorageAsk.SeqNo', 0),
    },
    signature: signatureField(signed.Signature, 'SignedStorageAsk.Signature'),
  }
}

// ---- transports (retrievalmarket/types/transports.ipldsch) --------------------

export const encodeQueryResponse = (protocols: { name: string; addresses: Uint8Array[] }[]): Uint8Array =>
  encode({ Protocols: protocols.map((p) => ({ Name: p.name, Addresses: p.addresses })) })

export function decodeQueryResponse(v: unknown): { name: string; addresses: Uint8Array[] }[] {
  const list = struct(v, 'QueryResponse').Protocols
  if (!Array.isArray(list)) throw new ProviderWireError('QueryResponse.Protocols: expected a list')
  return list.map((p) => {
    const m = struct(p, 'Protocol')
    const addresses = m.Addresses
    if (!Array.isArray(addresses)) throw new ProviderWireError('Protocol.Addresses: expected a list')
    return { name: textString(m.Name, 'Protocol.Name'), addresses: addresses.map((a) => byteString(a, 'Protocol.Addresses[]')) }
  })
}

// ---- signatures (lotus lib/sigs/secp) -----------------------------------------

/**
 * Whether a secp256k1 signature over `payload` is by the key behind the f1
 * address: the public key is recovered from r‖s‖v over blake2b-256 of the
 * payload and its blake2b-160 must be the address's payload (Lotus
 * lib/sigs/secp/init.go Verify). Other signature types are not accepted.
 */
export function verifySecp256k1(address: string, payload: Uint8Array, signature: WireSignature): boolean {
  const parsed = parseAddress(address)
  if (!parsed.ok || parsed.address.protocol !== 1 || signature.type !== 1 || signature.data.length !== 65) return false
  const v = signature.data[64]
  if (v > 3) return false
  try {
    const compact = new Uint8Array(65)
    compact[0] = v
    compact.set(signature.data.subarray(0, 64), 1)
    const pub = secp256k1.recoverPublicKey(compact, blake2b(payload, { dkLen: 32 }), { prehash: false })
    const uncompressed = secp256k1.Point.fromBytes(pub).toBytes(false)
    return formatAddress(parsed.address.network, 1, blake2b(uncompressed, { dkLen: 20 })) === parsed.address.text
  } catch {
    return false
  }
}

/** Signs as a Filecoin secp256k1 key does (for the provider's worker signing its ask, and for test clients). */
export function signSecp256k1(privateKey: Uint8Array, payload: Uint8Array): WireSignature {
  const recovered = secp256k1.sign(blake2b(payload, { dkLen: 32 }), privateKey, { prehash: false, format: 'recovered' })
  const data = new Uint8Array(65)
  data.set(recovered.subarray(1), 0)
  data[64] = recovered[0]
  return { type: 1, data }
}
