import { randomUUID } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { getAddress, zeroAddress, type Address, type Hex } from 'viem'
import { ChainSendError } from './pdp-provider-chain.ts'

/**
 * What every handler of a simulated Curio shares: answers as Go's net/http
 * writes them, JSON bodies decoded as Go's json.Decoder reads them, Curio's
 * error texts and request limits, and the one service label it serves.
 */

/** The service label the provider serves every request under. */
export const SERVICE = 'public'
/** Curio pdp/handlers.go limits. */
export const MAX_CREATE_EXTRA_DATA = 4096
export const MAX_ADD_PIECES_BATCH = 40
export const MAX_DELETE_EXTRA_DATA = 1024
export const MAX_DELETE_BATCH = 35
const JSON_BODY_LIMIT = 1 << 20

/** A handler's failure: its status and text, and whether the text gets an error id (Curio's httpServerError) or goes as it is. */
export class HttpFail extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly withEid = true,
    readonly cause?: unknown,
  ) {
    super(message)
  }
}

/** Go's http.Error: plain text, nosniff, the message and a newline. */
export function goError(res: ServerResponse, status: number, msg: string): void {
  if (res.headersSent) return void res.destroy()
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' })
  res.end(`${msg}\n`)
}

/** Curio's httpServerError: a chain error's own text, otherwise the message with an error id. */
export function serverError(res: ServerResponse, status: number, msg: string, err?: unknown): void {
  if (err instanceof ChainSendError) return goError(res, status, `chain: ${err.message}`)
  goError(res, status, `${msg} [eid: ${randomUUID()}]`)
}

/** Go's json.NewEncoder(w).Encode: the JSON and a newline. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' })
  res.end(`${JSON.stringify(body)}\n`)
}

export async function readBody(req: IncomingMessage, limit = JSON_BODY_LIMIT): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > limit) throw new Error('http: request body too large')
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/** Decodes a JSON body as Go's json.Decoder does for these handlers; an empty body is io.EOF. */
export async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const text = await readBody(req)
  if (text.trim() === '') throw new Error('EOF')
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (err) {
    throw new Error(`invalid character in JSON: ${(err as Error).message}`, { cause: err })
  }
  if (value === null) return {}
  if (typeof value !== 'object' || Array.isArray(value)) throw new Error('json: cannot unmarshal into Go value of type struct')
  return value as Record<string, unknown>
}

export const optString = (body: Record<string, unknown>, field: string): string | undefined => {
  const v = body[field]
  if (v === undefined || v === null) return undefined
  if (typeof v !== 'string') throw new Error(`json: cannot unmarshal ${typeof v} into Go struct field .${field} of type string`)
  return v
}

/** Curio decodeExtraData: optional hex, with or without 0x. */
export function decodeExtraData(text: string | undefined): Uint8Array | null {
  if (text === undefined) return null
  const hex = text.startsWith('0x') ? text.slice(2) : text
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) throw new Error(`encoding/hex: invalid byte`)
  return new Uint8Array(Buffer.from(hex, 'hex'))
}

/** go-ethereum common.HexToAddress: lenient, last 20 bytes. */
export function hexToAddress(text: string): Address {
  let hex = text.startsWith('0x') || text.startsWith('0X') ? text.slice(2) : text
  if (hex.length % 2 === 1) hex = `0${hex}`
  if (!/^[0-9a-fA-F]*$/.test(hex)) return zeroAddress
  hex = hex.slice(-40).padStart(40, '0')
  return getAddress(`0x${hex}`)
}

/** Curio's tx hash cleanup: 0x prefix, lower case, 66 characters of hex. */
export function cleanTxHash(raw: string): string | HttpFail {
  let hash = raw.startsWith('0x') ? raw : `0x${raw}`
  hash = hash.toLowerCase()
  if (hash.length !== 66) return new HttpFail(400, 'Invalid txHash length', false)
  if (!/^0x[0-9a-f]{64}$/.test(hash)) return new HttpFail(400, 'Invalid txHash format', false)
  return hash
}

export const UUID_RE = /^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/

export function parseUint(text: string): number | null {
  if (!/^\d+$/.test(text)) return null
  const n = Number(text)
  return Number.isSafeInteger(n) ? n : null
}

/** Sends a transaction for a handler; a send the chain refuses is a 500 with the chain's own text. */
export async function sendTx(send: () => Promise<Hex>): Promise<string> {
  try {
    return (await send()).toLowerCase()
  } catch (err) {
    throw new HttpFail(500, `Failed to send transaction: ${(err as Error).message}`, true, err)
  }
}
