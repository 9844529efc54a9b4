import { createHash } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { bytesToHex, zeroAddress, type Address } from 'viem'
import type { PdpChain } from './pdp-provider-chain.ts'
import type { ProviderDb, PullItem, PullStatus } from './pdp-provider-db.ts'
import { creationValue, v2Of, verifyDataSet } from './pdp-provider-data-sets.ts'
import { decodeExtraData, hexToAddress, HttpFail, MAX_ADD_PIECES_BATCH, readJson, sendJson, SERVICE } from './pdp-provider-http.ts'
import { parsePieceCid, PIECE_SIZE_MAX, PIECE_SIZE_MIN, type ParsedPieceCid } from './pdp-provider-piece.ts'

/**
 * Pulls by a simulated Curio (pdp/handlers_pull.go): the client names
 * pieces and where to fetch them; the provider checks that the client could
 * add them, records the pull, and its tasks fetch the pieces in the background.
 */

export interface PullContext {
  db: ProviderDb
  chain: PdpChain
  /** Record keepers (lower case) a public service may use. */
  recordKeepers: Set<string>
  /** Accept http:// pull sources (Curio's CURIO_PULL_ALLOW_INSECURE=1). */
  pullAllowInsecure: boolean
  /** Sets the provider's tasks on the pulls just recorded. */
  startPulls(): void
}

/** POST /pdp/piece/pull (handlers_pull.go HandlePull): idempotent on (service, sha256(extraData), dataSetId, recordKeeper). */
export async function handlePull(ctx: PullContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { db, chain, recordKeepers, pullAllowInsecure } = ctx
  let body: Record<string, unknown>
  try {
    body = await readJson(req)
  } catch (err) {
    throw new HttpFail(400, `Invalid request body: ${(err as Error).message}`)
  }
  const extraText = typeof body.extraData === 'string' ? body.extraData : ''
  const dataSetId = typeof body.dataSetId === 'number' ? body.dataSetId : 0
  const recordKeeperText = typeof body.recordKeeper === 'string' ? body.recordKeeper : ''
  const pieces = Array.isArray(body.pieces)
    ? (body.pieces as Record<string, unknown>[]).map((p) => ({
        pieceCid: String(p?.pieceCid ?? ''),
        sourceUrl: String(p?.sourceUrl ?? ''),
      }))
    : []
  const invalid = (msg: string) => new HttpFail(400, `Validation error: ${msg}`)
  if (extraText === '') throw invalid('extraData is required')
  if (dataSetId === 0 && recordKeeperText === '') throw invalid('recordKeeper is required when dataSetId is not provided or is 0')
  if (pieces.length === 0) throw invalid('at least one piece is required')
  if (pieces.length > MAX_ADD_PIECES_BATCH)
    throw invalid(`piece count (${pieces.length}) exceeds the maximum allowed per pull (${MAX_ADD_PIECES_BATCH})`)
  const seen = new Set<string>()
  pieces.forEach((p, i) => {
    if (p.pieceCid === '') throw invalid(`piece[${i}]: pieceCid is required`)
    if (p.sourceUrl === '') throw invalid(`piece[${i}]: sourceUrl is required`)
    const key = `${p.pieceCid}\0${p.sourceUrl}`
    if (seen.has(key)) throw invalid(`piece[${i}]: duplicate pieceCid/sourceUrl`)
    seen.add(key)
    let scheme: string
    try {
      scheme = new URL(p.sourceUrl).protocol.slice(0, -1)
    } catch (err) {
      throw invalid(`piece[${i}]: invalid URL: ${(err as Error).message}`)
    }
    if (scheme !== 'https' && !(pullAllowInsecure && scheme === 'http'))
      throw invalid(`piece[${i}]: URL must use HTTPS scheme, got "${scheme}"`)
  })
  let recordKeeper: Address = zeroAddress
  if (dataSetId === 0) {
    recordKeeper = hexToAddress(recordKeeperText)
    if (recordKeeper === zeroAddress) throw new HttpFail(400, 'Invalid recordKeeper address')
    if (!recordKeepers.has(recordKeeper.toLowerCase())) throw new HttpFail(403, 'recordKeeper address not allowed for public service')
  }
  let extraData: Uint8Array | null
  try {
    extraData = decodeExtraData(extraText)
  } catch (err) {
    throw new HttpFail(400, `Invalid extraData: ${(err as Error).message}`)
  }
  const extraHash = createHash('sha256').update(extraData!).digest('hex')
  const existing = db.t.pulls.find(
    (p) => p.service === SERVICE && p.extraDataHash === extraHash && p.dataSetId === dataSetId && p.recordKeeper === recordKeeperText,
  )
  if (existing) return respondPull(res, existing.items)
  if (dataSetId > 0) verifyDataSet(db, dataSetId)
  const infos = pieces.map((p, i) => {
    let info: ParsedPieceCid
    try {
      info = parsePieceCid(p.pieceCid, true)
    } catch (err) {
      throw new HttpFail(400, `Invalid pieceCid[${i}]: ${(err as Error).message}`)
    }
    if (info.rawSize! < PIECE_SIZE_MIN) throw new HttpFail(400, `pieceCid[${i}]: size ${info.rawSize} is below minimum ${PIECE_SIZE_MIN}`)
    if (info.rawSize! > PIECE_SIZE_MAX) throw new HttpFail(400, `pieceCid[${i}]: size ${info.rawSize} exceeds maximum ${PIECE_SIZE_MAX}`)
    return info
  })
  // The client must be able to add these pieces: eth_call of addPieces from this provider, with the
  // cleanup deposit as the value when it creates the data set (handlers_pull.go validateExtraData).
  try {
    await chain.validateAddPieces(
      BigInt(dataSetId),
      recordKeeper,
      infos.map((info) => bytesToHex(info.v2!.bytes)),
      bytesToHex(extraData!),
      dataSetId === 0 ? await creationValue(ctx) : 0n,
    )
  } catch (err) {
    throw new HttpFail(400, `extraData validation failed: addPieces validation failed: ${(err as Error).message}`)
  }
  const items: PullItem[] = infos.map((info, i) => ({
    pieceCid: info.v1.toString(),
    rawSize: info.rawSize!,
    sourceUrl: pieces[i].sourceUrl,
    status: 'pending',
    attempts: 0,
  }))
  db.t.pulls.push({
    id: db.nextId(),
    service: SERVICE,
    extraDataHash: extraHash,
    dataSetId,
    recordKeeper: recordKeeperText,
    clientAddress: '',
    items,
  })
  await db.save()
  ctx.startPulls()
  respondPull(res, items)
}

/** The pull's pieces and their overall status, as Curio answers a pull (new or repeated). */
function respondPull(res: ServerResponse, items: PullItem[]): void {
  const pieces = [...items]
    .sort((a, b) => (a.pieceCid < b.pieceCid ? -1 : a.pieceCid > b.pieceCid ? 1 : a.sourceUrl < b.sourceUrl ? -1 : 1))
    .map((item) => ({ pieceCid: v2Of(item.pieceCid, item.rawSize), status: item.status }))
  sendJson(res, 200, { status: overallPullStatus(pieces.map((p) => p.status)), pieces })
}

/** Curio pull_types.go ComputeOverallStatus: non-terminal pieces keep the batch non-terminal. */
export function overallPullStatus(statuses: PullStatus[]): PullStatus {
  if (statuses.length === 0) return 'pending'
  if (statuses.includes('retrying')) return 'retrying'
  if (statuses.includes('inProgress')) return 'inProgress'
  if (statuses.includes('pending')) return 'pending'
  if (statuses.every((s) => s === 'failed')) return 'failed'
  return 'complete'
}
