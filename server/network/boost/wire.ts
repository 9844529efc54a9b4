import * as dagCbor from '@ipld/dag-cbor'
import { CID } from 'multiformats/cid'
import { addressBytesOf, addressFromBytes, type AddressNetwork } from '../../shared/address.ts'
import { protocolError } from '../errors.ts'
import type { DealProposal } from '../types.ts'
import { signatureBytes, type Signature } from '../wallet/keys.ts'
import { bigIntBytes, chainCid } from '../wallet/message.ts'

/**
 * The messages of the storage market protocols Boost and Curio serve, as
 * their cbor-gen code writes them (Boost storagemarket/types/types.go,
 * legacytypes/network/types.go, retrievalmarket transports): structs as CBOR
 * maps whose keys are the Go field names, in length-first order, which is
 * DAG-CBOR's canonical order, so `@ipld/dag-cbor` writes the same bytes. The
 * market DealProposal is a CBOR tuple (go-state-types builtin/v9/market).
 * Everything read from a peer is checked here and arrives typed or as a
 * NetworkError with code PROTOCOL_ERROR.
 */

export const PROTOCOL = {
  ask: '/fil/storage/ask/1.1.0',
  /** Newest first: 1.2.1 adds RemoveUnsealedCopy and SkipIPNIAnnounce. */
  deal: ['/fil/storage/mk/1.2.1', '/fil/storage/mk/1.2.0'],
  status: '/fil/storage/status/1.2.0',
  transports: '/fil/retrieval/transports/1.0.0',
} as const

/** Where the provider fetches the CAR: Boost's `Transfer` with type "http" and its JSON params. */
export interface HttpTransfer {
  url: string
  headers: Record<string, string>
  /** CAR bytes. */
  size: number
  /** Boost's ClientID: an id the client gives the transfer (we send the deal UUID). */
  clientId: string
}

export interface DealParams {
  dealUuid: string
  proposal: DealProposal
  clientSignature: Signature
  /** The payload root CID (the group's CAR root). */
  dataRoot: string
  transfer: HttpTransfer
  removeUnsealedCopy: boolean
  skipIpniAnnounce: boolean
}

export interface DealResponse {
  accepted: boolean
  message: string
}

export interface DealStatusRequest {
  dealUuid: string
  /** The client's signature over the 16 bytes of the deal UUID. */
  signature: Signature
}

/** Boost's answer to a status request; `status` null when it has no such deal (then `error` says why). */
export interface DealStatusResponse {
  dealUuid: string
  error: string
  status: {
    error: string
    /** A Boost checkpoint: Accepted, Transferred, Published, PublishConfirmed, AddedPiece, IndexedAndAnnounced, Complete. */
    checkpoint: string
    sealingStatus: string
    proposal: DealProposal
    signedProposalCid: string
    publishCid: string | null
    chainDealId: number
  } | null
  transferSize: number
  bytesReceived: number
}

export interface StorageAsk {
  /** Attofil per GiB per epoch, decimal strings. */
  price: string
  verifiedPrice: string
  minPieceSize: number
  maxPieceSize: number
  miner: string
  timestamp: number
  expiry: number
  seqNo: number
}

export interface TransportProtocol {
  name: string
  /** Multiaddr bytes, e.g. of /ip4/…/tcp/…/http. */
  addresses: Uint8Array[]
}

// ---- the market deal proposal -------------------------------------------------

const amount = (decimal: string): Uint8Array => {
  if (!/^(0|[1-9][0-9]*)$/.test(decimal)) throw new RangeError(`not an amount: ${decimal}`)
  return bigIntBytes(BigInt(decimal))
}

/** The market DealProposal as its CBOR tuple (go-state-types builtin/v9/market). */
export function proposalTuple(p: DealProposal): unknown[] {
  return [
    CID.parse(p.PieceCID['/']),
    p.PieceSize,
    p.VerifiedDeal,
    addressBytesOf(p.Client),
    addressBytesOf(p.Provider),
    p.Label,
    p.StartEpoch,
    p.EndEpoch,
    amount(p.StoragePricePerEpoch),
    amount(p.ProviderCollateral),
    amount(p.ClientCollateral),
  ]
}

/** The proposal's CBOR bytes: what the client signs. */
export function encodeDealProposal(p: DealProposal): Uint8Array {
  return dagCbor.encode(proposalTuple(p))
}

/** The signed proposal (market.ClientDealProposal: [proposal, signature]) as CBOR. */
export function encodeClientDealProposal(p: DealProposal, signature: Signature): Uint8Array {
  return dagCbor.encode([proposalTuple(p), signatureBytes(signature)])
}

/** A signed proposal's CBOR (market.ClientDealProposal), as encodeClientDealProposal wrote it: the terms agreed and paid by. */
export function decodeClientDealProposal(cbor: Uint8Array, network: AddressNetwork): { proposal: DealProposal; signature: Signature } {
  const signed = array(dagCbor.decode(cbor), 'ClientDealProposal', 2)
  return { proposal: decodeProposal(signed[0], network), signature: decodeSignature(signed[1]) }
}

/** The proposal CID a provider and the chain know the signed proposal by. */
export function signedProposalCid(p: DealProposal, signature: Signature): string {
  return chainCid(encodeClientDealProposal(p, signature)).toString()
}

// ---- deal proposal protocol (mk) ----------------------------------------------

export function encodeDealParams(d: DealParams, protocol: string = PROTOCOL.deal[0]): Uint8Array {
  const params: Record<string, unknown> = {
    DealUUID: uuidBytes(d.dealUuid),
    IsOffline: false,
    ClientDealProposal: [proposalTuple(d.proposal), signatureBytes(d.clientSignature)],
    DealDataRoot: CID.parse(d.dataRoot),
    Transfer: {
      Type: 'http',
      ClientID: d.transfer.clientId,
      Params: new TextEncoder().encode(JSON.stringify({ URL: d.transfer.url, Headers: d.transfer.headers })),
      Size: d.transfer.size,
    },
  }
  if (protocol !== '/fil/storage/mk/1.2.0') {
    params.RemoveUnsealedCopy = d.removeUnsealedCopy
    params.SkipIPNIAnnounce = d.skipIpniAnnounce
  }
  return dagCbor.encode(params)
}

export function decodeDealParams(value: unknown, network: AddressNetwork): DealParams {
  const m = map(value, 'DealParams')
  if (bool(m.IsOffline, 'IsOffline')) throw protocolError('offline deals are not taken')
  const signed = array(m.ClientDealProposal, 'ClientDealProposal', 2)
  const transfer = map(m.Transfer, 'Transfer')
  if (text(transfer.Type, 'Transfer.Type') !== 'http') throw protocolError(`transfer type ${String(transfer.Type)} is not supported`)
  let params: { URL?: unknown; Headers?: unknown }
  try {
    params = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes(transfer.Params, 'Transfer.Params')))
  } catch {
    throw protocolError('Transfer.Params is not JSON')
  }
  const headers = params.Headers ?? {}
  if (
    typeof params.URL !== 'string' ||
    typeof headers !== 'object' ||
    headers === null ||
    Object.values(headers).some((v) => typeof v !== 'string')
  ) {
    throw protocolError('Transfer.Params must be {URL, Headers}')
  }
  return {
    dealUuid: uuidText(bytes(m.DealUUID, 'DealUUID')),
    proposal: decodeProposal(signed[0], network),
    clientSignature: decodeSignature(signed[1]),
    dataRoot: cid(m.DealDataRoot, 'DealDataRoot'),
    transfer: {
      url: params.URL,
      headers: headers as Record<string, string>,
      size: uint(transfer.Size, 'Transfer.Size'),
      clientId: text(transfer.ClientID ?? '', 'Transfer.ClientID'),
    },
    removeUnsealedCopy: m.RemoveUnsealedCopy === undefined ? false : bool(m.RemoveUnsealedCopy, 'RemoveUnsealedCopy'),
    skipIpniAnnounce: m.SkipIPNIAnnounce === undefined ? false : bool(m.SkipIPNIAnnounce, 'SkipIPNIAnnounce'),
  }
}

export const encodeDealResponse = (r: DealResponse): Uint8Array => dagCbor.encode({ Accepted: r.accepted, Message: r.message })

export function decodeDealResponse(value: unknown): DealResponse {
  const m = map(value, 'DealResponse')
  return { accepted: bool(m.Accepted, 'Accepted'), message: text(m.Message ?? '', 'Message') }
}

// ---- deal status protocol -----------------------------------------------------

export const encodeDealStatusRequest = (r: DealStatusRequest): Uint8Array =>
  dagCbor.encode({ DealUUID: uuidBytes(r.dealUuid), Signature: signatureBytes(r.signature) })

export function decodeDealStatusRequest(value: unknown): DealStatusRequest {
  const m = map(value, 'DealStatusRequest')
  return { dealUuid: uuidText(bytes(m.DealUUID, 'DealUUID')), signature: decodeSignature(m.Signature) }
}

export function encodeDealStatusResponse(r: DealStatusResponse): Uint8Array {
  const s = r.status
  return dagCbor.encode({
    DealUUID: uuidBytes(r.dealUuid),
    Error: r.error,
    DealStatus: s && {
      Error: s.error,
      Status: s.checkpoint,
      SealingStatus: s.sealingStatus,
      Proposal: proposalTuple(s.proposal),
      SignedProposalCid: CID.parse(s.signedProposalCid),
      PublishCid: s.publishCid ? CID.parse(s.publishCid) : null,
      ChainDealID: s.chainDealId,
    },
    IsOffline: false,
    TransferSize: r.transferSize,
    NBytesReceived: r.bytesReceived,
  })
}

export function decodeDealStatusResponse(value: unknown, network: AddressNetwork): DealStatusResponse {
  const m = map(value, 'DealStatusResponse')
  const s = m.DealStatus === null || m.DealStatus === undefined ? null : map(m.DealStatus, 'DealStatus')
  return {
    dealUuid: uuidText(bytes(m.DealUUID, 'DealUUID')),
    error: text(m.Error ?? '', 'Error'),
    status: s && {
      error: text(s.Error ?? '', 'DealStatus.Error'),
      checkpoint: text(s.Status ?? '', 'DealStatus.Status'),
      sealingStatus: text(s.SealingStatus ?? '', 'DealStatus.SealingStatus'),
      proposal: decodeProposal(s.Proposal, network),
      signedProposalCid: cid(s.SignedProposalCid, 'SignedProposalCid'),
      publishCid: s.PublishCid === null || s.PublishCid === undefined ? null : cid(s.PublishCid, 'PublishCid'),
      chainDealId: uint(s.ChainDealID ?? 0, 'ChainDealID'),
    },
    transferSize: uint(m.TransferSize ?? 0, 'TransferSize'),
    bytesReceived: uint(m.NBytesReceived ?? 0, 'NBytesReceived'),
  }
}

// ---- ask and transports -------------------------------------------------------

export const encodeAskRequest = (miner: string): Uint8Array => dagCbor.encode({ Miner: addressBytesOf(miner) })

export function decodeAskRequest(value: unknown, network: AddressNetwork): string {
  return address(map(value, 'AskRequest').Miner, 'Miner', network)
}

const askBody = (ask: StorageAsk) => ({
  Price: amount(ask.price),
  VerifiedPrice: amount(ask.verifiedPrice),
  MinPieceSize: ask.minPieceSize,
  MaxPieceSize: ask.maxPieceSize,
  Miner: addressBytesOf(ask.miner),
  Timestamp: ask.timestamp,
  Expiry: ask.expiry,
  SeqNo: ask.seqNo,
})

/** The ask's CBOR bytes: what the provider's worker key signs. */
export const encodeStorageAsk = (ask: StorageAsk): Uint8Array => dagCbor.encode(askBody(ask))

/** Boost's AskResponse: the SignedStorageAsk, or null when the provider has no ask. */
export function encodeAskResponse(ask: StorageAsk | null, signature: Signature | null): Uint8Array {
  return dagCbor.encode({ Ask: ask && { Ask: askBody(ask), Signature: signature && signatureBytes(signature) } })
}

export function decodeAskResponse(value: unknown, network: AddressNetwork): StorageAsk | null {
  const signed = map(value, 'AskResponse').Ask
  if (signed === null || signed === undefined) return null
  const a = map(map(signed, 'SignedStorageAsk').Ask, 'StorageAsk')
  return {
    price: tokenAmount(a.Price, 'Price'),
    verifiedPrice: tokenAmount(a.VerifiedPrice, 'VerifiedPrice'),
    minPieceSize: uint(a.MinPieceSize, 'MinPieceSize'),
    maxPieceSize: uint(a.MaxPieceSize, 'MaxPieceSize'),
    miner: address(a.Miner, 'Miner', network),
    timestamp: int(a.Timestamp ?? 0, 'Timestamp'),
    expiry: int(a.Expiry ?? 0, 'Expiry'),
    seqNo: uint(a.SeqNo ?? 0, 'SeqNo'),
  }
}

export const encodeTransports = (protocols: TransportProtocol[]): Uint8Array =>
  dagCbor.encode({ Protocols: protocols.map((p) => ({ Name: p.name, Addresses: p.addresses })) })

export function decodeTransports(value: unknown): TransportProtocol[] {
  return array(map(value, 'QueryResponse').Protocols, 'Protocols').map((p) => {
    const m = map(p, 'Protocol')
    return { name: text(m.Name, 'Name'), addresses: array(m.Addresses ?? [], 'Addresses').map((a) => bytes(a, 'Address')) }
  })
}

// ---- pieces -------------------------------------------------------------------

export function uuidBytes(uuid: string): Uint8Array {
  const hex = uuid.replace(/-/g, '')
  if (!/^[0-9a-f]{32}$/i.test(hex)) throw new RangeError(`not a UUID: ${uuid}`)
  return Uint8Array.from(Buffer.from(hex, 'hex'))
}

function uuidText(b: Uint8Array): string {
  if (b.length !== 16) throw protocolError('DealUUID must be 16 bytes')
  const h = Buffer.from(b).toString('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}

function decodeProposal(value: unknown, network: AddressNetwork): DealProposal {
  const t = array(value, 'DealProposal', 11)
  const label = t[5]
  return {
    PieceCID: { '/': cid(t[0], 'PieceCID') },
    PieceSize: uint(t[1], 'PieceSize'),
    VerifiedDeal: bool(t[2], 'VerifiedDeal'),
    Client: address(t[3], 'Client', network),
    Provider: address(t[4], 'Provider', network),
    // DealLabel is a string or bytes (FIP-0027); bytes are shown as their UTF-8 reading.
    Label: label instanceof Uint8Array ? Buffer.from(label).toString('utf8') : text(label, 'Label'),
    StartEpoch: int(t[6], 'StartEpoch'),
    EndEpoch: int(t[7], 'EndEpoch'),
    StoragePricePerEpoch: tokenAmount(t[8], 'StoragePricePerEpoch'),
    ProviderCollateral: tokenAmount(t[9], 'ProviderCollateral'),
    ClientCollateral: tokenAmount(t[10], 'ClientCollateral'),
  }
}

function decodeSignature(value: unknown): Signature {
  const b = bytes(value, 'Signature')
  if (b[0] !== 1 || b.length !== 66) throw protocolError('only secp256k1 signatures (type 1, 65 bytes) are taken')
  return { type: 1, data: b.slice(1) }
}

function map(v: unknown, what: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v) || v instanceof Uint8Array || CID.asCID(v))
    throw protocolError(`${what} must be a map`)
  return v as Record<string, unknown>
}
function array(v: unknown, what: string, length?: number): unknown[] {
  if (!Array.isArray(v) || (length !== undefined && v.length !== length))
    throw protocolError(`${what} must be a list${length ? ` of ${length}` : ''}`)
  return v
}
function bytes(v: unknown, what: string): Uint8Array {
  if (!(v instanceof Uint8Array)) throw protocolError(`${what} must be bytes`)
  return v
}
function text(v: unknown, what: string): string {
  if (typeof v !== 'string') throw protocolError(`${what} must be a string`)
  return v
}
function bool(v: unknown, what: string): boolean {
  if (typeof v !== 'boolean') throw protocolError(`${what} must be a boolean`)
  return v
}
function int(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw protocolError(`${what} must be an integer`)
  return v
}
function uint(v: unknown, what: string): number {
  const n = int(v, what)
  if (n < 0) throw protocolError(`${what} must not be negative`)
  return n
}
function cid(v: unknown, what: string): string {
  const c = CID.asCID(v)
  if (!c) throw protocolError(`${what} must be a CID`)
  return c.toString()
}
function address(v: unknown, what: string, network: AddressNetwork): string {
  const a = addressFromBytes(bytes(v, what), network)
  if (!a) throw protocolError(`${what} is not an address`)
  return a
}
/** big.Int bytes: empty for zero, else a sign byte (0 positive, 1 negative) and the magnitude. */
function tokenAmount(v: unknown, what: string): string {
  const b = bytes(v, what)
  if (b.length === 0) return '0'
  if (b[0] !== 0) throw protocolError(`${what} must not be negative`)
  return b.length === 1 ? '0' : BigInt(`0x${Buffer.from(b.subarray(1)).toString('hex')}`).toString()
}
