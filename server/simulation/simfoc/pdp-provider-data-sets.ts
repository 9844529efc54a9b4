import type { IncomingMessage, ServerResponse } from 'node:http'
import { bytesToHex, zeroAddress, type Address } from 'viem'
import type { PdpChain } from './pdp-provider-chain.ts'
import type { DataSet, ProviderDb } from './pdp-provider-db.ts'
import {
  cleanTxHash,
  decodeExtraData,
  goError,
  hexToAddress,
  HttpFail,
  MAX_CREATE_EXTRA_DATA,
  MAX_DELETE_BATCH,
  MAX_DELETE_EXTRA_DATA,
  optString,
  parseUint,
  readBody,
  readJson,
  sendJson,
  sendTx,
  SERVICE,
} from './pdp-provider-http.ts'
import { parsePieceCid, pieceCidV2 } from './pdp-provider-piece.ts'
import type { TaskLog } from './pdp-provider-tasks.ts'

/**
 * The data sets of a simulated Curio over HTTP: creating one (Curio sends
 * createDataSet itself and reports on it by transaction hash), reading one
 * and its pieces, and scheduling the removal of pieces.
 */

export interface DataSetContext {
  db: ProviderDb
  chain: PdpChain
  log: TaskLog
  /** Record keepers (lower case) a public service may use: the FWSS address (Curio contract.IsRecordKeeperAllowed). */
  recordKeepers: Set<string>
}

/** Curio verifyDataSetForService. */
export function verifyDataSet(db: ProviderDb, id: number): DataSet {
  const dataSet = db.dataSet(id)
  if (!dataSet || dataSet.service !== SERVICE) throw new HttpFail(404, 'Data set not found')
  if (dataSet.unrecoverableEpoch != null)
    throw new HttpFail(409, 'data set has been terminated due to unrecoverable proving failure', false)
  return dataSet
}

/** The body's record keeper, which must be one the public service may use. */
export function recordKeeperFrom(ctx: DataSetContext, body: Record<string, unknown>): Address {
  const { recordKeepers } = ctx
  const text = optString(body, 'recordKeeper') ?? ''
  if (text === '') throw new HttpFail(400, 'recordKeeper address is required')
  const address = hexToAddress(text)
  if (address === zeroAddress) throw new HttpFail(400, 'Invalid recordKeeper address')
  if (!recordKeepers.has(address.toLowerCase())) throw new HttpFail(403, 'recordKeeper address not allowed for public service')
  return address
}

/**
 * The FIL a creation carries: PDPVerifier 3.4.0's cleanup deposit, read from the verifier each
 * time and paid by the provider (Curio pdp/contract/ethcall.go FilCleanupDeposit, used by
 * pdp/handlers_create.go and tasks/pdp/task_add_data_set.go).
 */
export async function creationValue(ctx: Pick<DataSetContext, 'chain'>): Promise<bigint> {
  return ctx.chain.cleanupDeposit()
}

/** POST /pdp/data-sets (handleCreateDataSet). */
export async function handleCreateDataSet(ctx: DataSetContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { db, chain, log } = ctx
  let body: Record<string, unknown>
  try {
    body = await readJson(req)
  } catch (err) {
    throw new HttpFail(400, `Invalid JSON in request body: ${(err as Error).message}`)
  }
  const recordKeeper = recordKeeperFrom(ctx, body)
  let extraData: Uint8Array | null
  try {
    extraData = decodeExtraData(optString(body, 'extraData'))
  } catch (err) {
    throw new HttpFail(400, `Invalid extraData format (must be hex encoded): ${(err as Error).message}`)
  }
  if (extraData && extraData.length > MAX_CREATE_EXTRA_DATA)
    throw new HttpFail(
      400,
      `extraData size (${extraData.length} bytes) exceeds the maximum allowed limit for CreateDataSet (${MAX_CREATE_EXTRA_DATA} bytes)`,
    )
  const extraHex = bytesToHex(extraData ?? new Uint8Array())
  const value = await creationValue(ctx)
  const hash = await sendTx(() => chain.createDataSet(recordKeeper, extraHex, value))
  db.t.waits[hash] = { status: 'pending', success: null, reason: 'pdp-mkdataset' }
  db.t.creates[hash] = { txHash: hash, service: SERVICE, ok: null, dataSetCreated: false, extraData: extraHex }
  await db.save()
  log.info({ hash, recordKeeper }, 'simulated Curio: createDataSet sent')
  res.writeHead(201, { Location: `/pdp/data-sets/created/${hash}` })
  res.end()
}

/** GET /pdp/data-sets/created/{txHash} (handleGetDataSetCreationStatus). */
export function handleCreationStatus(ctx: DataSetContext, res: ServerResponse, raw: string): void {
  const { db } = ctx
  const hash = cleanTxHash(raw)
  if (hash instanceof HttpFail) throw hash
  const create = db.t.creates[hash]
  if (!create) return goError(res, 404, 'Data set creation not found for given txHash')
  if (create.service !== SERVICE) return goError(res, 401, 'Unauthorized: service label mismatch')
  const wait = db.t.waits[hash]
  if (!wait) return goError(res, 500, 'Message status not found for given txHash')
  const body: Record<string, unknown> = {
    createMessageHash: create.txHash,
    dataSetCreated: create.dataSetCreated,
    service: create.service,
    txStatus: wait.status,
    ok: create.ok,
  }
  if (create.dataSetCreated) {
    const dataSet = Object.values(db.t.dataSets).find((d) => d.createTxHash === hash)
    if (!dataSet) return goError(res, 500, 'Data set not found despite data_set_created = true')
    body.dataSetId = dataSet.id
  }
  sendJson(res, 200, body)
}

/** The PieceCIDv2 of a piece the database names by its v1 CID and raw size. */
export function v2Of(v1: string, rawSize: number): string {
  return pieceCidV2(parsePieceCid(v1).root, rawSize).toString()
}

/** GET /pdp/data-sets/{id} (handleGetDataSet). */
export function handleGetDataSet(ctx: DataSetContext, res: ServerResponse, idText: string): void {
  const { db } = ctx
  const id = parseUint(idText)
  if (id === null) return goError(res, 400, 'Invalid data set ID format')
  const dataSet = db.dataSet(id)
  if (!dataSet) return goError(res, 404, 'Data set not found')
  if (dataSet.service !== SERVICE) return goError(res, 401, 'Unauthorized: data set does not belong to your service')
  const pieces = db.t.pieces
    .filter((p) => p.dataSet === id && !p.removed)
    .sort((a, b) => a.pieceId - b.pieceId || a.subPieceOffset - b.subPieceOffset)
    .map((p) => ({
      pieceId: p.pieceId,
      pieceCid: v2Of(p.piece, p.rawSize),
      subPieceCid: v2Of(p.subPiece, p.rawSize),
      subPieceOffset: p.subPieceOffset,
    }))
  sendJson(res, 200, { id: dataSet.id, pieces, nextChallengeEpoch: dataSet.proveAtEpoch ?? 0 })
}

/** GET /pdp/data-sets/{id}/pieces/{pieceId} (handleGetDataSetPiece). */
export function handleGetPiece(ctx: DataSetContext, res: ServerResponse, idText: string, pieceText: string): void {
  const { db } = ctx
  const id = parseUint(idText)
  if (id === null) return goError(res, 400, 'Invalid data set ID format')
  const pieceId = parseUint(pieceText)
  if (pieceId === null) return goError(res, 400, 'Invalid piece ID format')
  const rows = db.t.pieces
    .filter((p) => p.dataSet === id && p.pieceId === pieceId && db.dataSet(id)?.service === SERVICE)
    .sort((a, b) => a.subPieceOffset - b.subPieceOffset)
  if (rows.length === 0) return goError(res, 404, 'Piece not found')
  sendJson(res, 200, {
    pieceId,
    pieceCid: rows[0].piece,
    subPieces: rows.map((r) => ({ subPieceCid: r.subPiece, subPieceOffset: r.subPieceOffset })),
  })
}

/** DELETE /pdp/data-sets/{id}/pieces/{pieceId} (handleDeleteDataSetPiece): schedulePieceDeletions. */
export async function handleDeletePiece(
  ctx: DataSetContext,
  req: IncomingMessage,
  res: ServerResponse,
  idText: string,
  pieceText: string,
): Promise<void> {
  const { db, chain, log } = ctx
  const id = parseUint(idText)
  if (id === null) return goError(res, 400, 'Invalid data set ID format')
  const pieceId = parseUint(pieceText)
  if (pieceId === null) return goError(res, 400, 'Invalid piece ID format')
  const dataSet = db.dataSet(id)
  if (!dataSet || dataSet.service !== SERVICE) return goError(res, 404, 'Data set not found')
  let extraText: string | undefined
  let ids: number[] = [pieceId]
  try {
    const text = await readBody(req)
    if (text.trim() !== '') {
      const body = JSON.parse(text) as Record<string, unknown>
      extraText = optString(body, 'extraData')
      if (Array.isArray(body.pieceIds) && body.pieceIds.length > 0) ids = body.pieceIds.map(Number)
    }
  } catch (err) {
    return goError(res, 400, `Invalid request body: ${(err as Error).message}`)
  }
  let extraData: Uint8Array | null
  try {
    extraData = decodeExtraData(extraText)
  } catch {
    return goError(res, 400, 'Invalid extraData format (must be hex encoded)')
  }
  if (extraData && extraData.length > MAX_DELETE_EXTRA_DATA)
    return goError(
      res,
      400,
      `extraData size (${extraData.length} bytes) exceeds the maximum allowed limit for DeletePiece (${MAX_DELETE_EXTRA_DATA} bytes)`,
    )
  if (ids.length > MAX_DELETE_BATCH)
    return goError(res, 400, `piece count (${ids.length}) exceeds the maximum allowed per DeletePiece call (${MAX_DELETE_BATCH})`)
  const unique = [...new Set(ids)]
  const found = new Set(db.t.pieces.filter((p) => p.dataSet === id && unique.includes(p.pieceId)).map((p) => p.pieceId))
  if (found.size !== unique.length) return goError(res, 404, 'One or more piece not found')
  const hash = await sendTx(() => chain.schedulePieceDeletions(BigInt(id), unique.map(BigInt), bytesToHex(extraData ?? new Uint8Array())))
  db.t.waits[hash] = { status: 'pending', success: null, reason: 'pdp-delete-piece' }
  for (const p of db.t.pieces) if (p.dataSet === id && unique.includes(p.pieceId)) p.rmTxHash = hash
  await db.save()
  log.info({ hash, dataSetId: id, pieceIds: unique }, 'simulated Curio: piece removal sent')
  sendJson(res, 200, { txHash: hash })
}
