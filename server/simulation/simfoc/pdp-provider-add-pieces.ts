import type { IncomingMessage, ServerResponse } from 'node:http'
import { bytesToHex, zeroAddress, type Hex } from 'viem'
import type { PieceAdd, ProviderDb } from './pdp-provider-db.ts'
import { creationValue, recordKeeperFrom, verifyDataSet, type DataSetContext } from './pdp-provider-data-sets.ts'
import {
  cleanTxHash,
  decodeExtraData,
  goError,
  HttpFail,
  MAX_ADD_PIECES_BATCH,
  optString,
  parseUint,
  readJson,
  sendJson,
  sendTx,
  SERVICE,
} from './pdp-provider-http.ts'
import { paddedSizeOf, parsePieceCid, pieceHeight, type ParsedPieceCid } from './pdp-provider-piece.ts'
import { ipfsIndexingFromExtraData } from './pdp-provider-tasks.ts'

/**
 * Adding pieces to a data set of a simulated Curio: to one that exists, or
 * to a new one in the same message (create-and-add), and the status of an
 * addition by its transaction hash. The pieces must be ones the provider
 * already holds; Curio sends addPieces itself.
 */

interface SubPieceRequest {
  subPieceCid: string
}
interface AddPieceRequest {
  pieceCid: string
  subPieces: SubPieceRequest[]
}

function parseAddPieceRequests(value: unknown): AddPieceRequest[] {
  if (value === undefined || value === null) return []
  if (!Array.isArray(value)) throw new Error('json: cannot unmarshal into Go struct field .pieces of type []pdp.AddPieceRequest')
  return value.map((p) => {
    const piece = (p ?? {}) as Record<string, unknown>
    const subs = piece.subPieces
    return {
      pieceCid: typeof piece.pieceCid === 'string' ? piece.pieceCid : '',
      subPieces: Array.isArray(subs)
        ? subs.map((s) => ({
            subPieceCid:
              typeof (s as Record<string, unknown>)?.subPieceCid === 'string' ? ((s as Record<string, unknown>).subPieceCid as string) : '',
          }))
        : [],
    }
  })
}

interface PreparedPiece {
  /** PieceCIDv2 bytes, as addPieces takes them. */
  data: Hex
  v1: string
  rawSize: number
  subPiece: { v1: string; pieceRef: number; offset: number; paddedSize: number; rawSize: number }
}

/** Curio transformAddPiecesRequest: each piece's sub-pieces must be pieces this provider holds for the service. */
async function preparePieces(db: ProviderDb, pieces: AddPieceRequest[]): Promise<PreparedPiece[]> {
  const fail = (msg: string) => new HttpFail(400, `Failed to process request: ${msg}`)
  const seen = new Set<string>()
  const subV1: string[][] = []
  for (const piece of pieces) {
    if (piece.pieceCid === '') throw fail('PieceCID is required for each piece')
    if (piece.subPieces.length === 0) throw fail('at least one subPiece is required per piece')
    const list: string[] = []
    for (const sub of piece.subPieces) {
      if (sub.subPieceCid === '') throw fail('subPieceCid is required for each subPiece')
      let parsed: ParsedPieceCid
      try {
        parsed = parsePieceCid(sub.subPieceCid)
      } catch (err) {
        throw fail(`invalid SubPiece: ${(err as Error).message}`)
      }
      const v1 = parsed.v1.toString()
      if (seen.has(v1)) throw fail('duplicate subPieceCid in request')
      seen.add(v1)
      list.push(v1)
    }
    subV1.push(list)
  }
  const out: PreparedPiece[] = []
  for (let i = 0; i < pieces.length; i++) {
    for (const v1 of subV1[i]) {
      if (!db.pieceRefByCid(v1, SERVICE))
        throw fail(`failed to validate subPieces: subPiece CID ${v1} not found or does not belong to service ${SERVICE}`)
    }
    let provided: ParsedPieceCid
    try {
      provided = parsePieceCid(pieces[i].pieceCid)
    } catch (err) {
      throw fail(`failed to validate subPieces: invalid provided PieceCid: ${(err as Error).message}`)
    }
    if (subV1[i].length > 1) throw fail('failed to validate subPieces: aggregate pieces are not supported by the simulated provider')
    const sub = subV1[i][0]
    if (provided.v1.toString() !== sub)
      throw fail(`failed to validate subPieces: provided PieceCid does not match generated PieceCid: ${provided.v1} != ${sub}`)
    if (!provided.v2) throw fail('invalid CommPv2: piece CID must be PieceCIDv2')
    const ref = db.pieceRefByCid(sub, SERVICE)!
    if (provided.rawSize !== ref.rawSize) throw fail(`raw size mismatch: expected ${ref.rawSize}, got ${provided.rawSize}`)
    out.push({
      data: bytesToHex(provided.v2.bytes),
      v1: sub,
      rawSize: ref.rawSize,
      subPiece: { v1: sub, pieceRef: ref.id, offset: 0, paddedSize: paddedSizeOf(pieceHeight(ref.rawSize)), rawSize: ref.rawSize },
    })
  }
  return out
}

function recordAdds(db: ProviderDb, dataSet: number | null, txHash: string, prepared: PreparedPiece[]): void {
  prepared.forEach((p, index) => {
    const row: PieceAdd = {
      dataSet,
      piece: p.v1,
      rawSize: p.rawSize,
      txHash,
      index,
      subPiece: p.subPiece.v1,
      subPieceOffset: p.subPiece.offset,
      subPieceSize: p.subPiece.paddedSize,
      pieceRef: p.subPiece.pieceRef,
      ok: null,
      piecesAdded: false,
    }
    db.t.adds.push(row)
    // EnableIndexingForPiecesInTx happens on the add for data sets with withIPFSIndexing; here when the pieces land.
  })
}

/** POST /pdp/data-sets/create-and-add (handleCreateDataSetAndAddPieces): addPieces on the new-data-set id 0. */
export async function handleCreateAndAdd(ctx: DataSetContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { db, chain, log } = ctx
  let body: Record<string, unknown>
  let pieces: AddPieceRequest[]
  try {
    body = await readJson(req)
    pieces = parseAddPieceRequests(body.pieces)
  } catch (err) {
    throw new HttpFail(400, `Invalid JSON in request body: ${(err as Error).message}`)
  }
  const recordKeeper = recordKeeperFrom(ctx, body)
  if (pieces.length === 0) throw new HttpFail(400, 'At least one piece must be provided')
  if (pieces.length > MAX_ADD_PIECES_BATCH)
    throw new HttpFail(
      400,
      `piece count (${pieces.length}) exceeds the maximum allowed per CreateDataSetAndAddPieces call (${MAX_ADD_PIECES_BATCH})`,
    )
  let extraData: Uint8Array | null
  try {
    extraData = decodeExtraData(optString(body, 'extraData'))
  } catch {
    throw new HttpFail(400, 'Invalid extraData format (must be hex encoded)')
  }
  const prepared = await preparePieces(db, pieces)
  const extraHex = bytesToHex(extraData ?? new Uint8Array())
  const value = await creationValue(ctx)
  const hash = await sendTx(() =>
    chain.addPieces(
      0n,
      recordKeeper,
      prepared.map((p) => p.data),
      extraHex,
      value,
    ),
  )
  db.t.waits[hash] = { status: 'pending', success: null, reason: 'pdp-create-and-add' }
  db.t.creates[hash] = { txHash: hash, service: SERVICE, ok: null, dataSetCreated: false, extraData: extraHex }
  recordAdds(db, null, hash, prepared)
  await db.save()
  log.info({ hash, pieces: prepared.length, ipfsIndexing: ipfsIndexingFromExtraData(extraHex) }, 'simulated Curio: create-and-add sent')
  res.writeHead(201, { Location: `/pdp/data-sets/created/${hash}` })
  res.end()
}

/** POST /pdp/data-sets/{id}/pieces (handleAddPieceToDataSet). */
export async function handleAddPieces(ctx: DataSetContext, req: IncomingMessage, res: ServerResponse, idText: string): Promise<void> {
  const { db, chain, log } = ctx
  const id = parseUint(idText)
  if (id === null) throw new HttpFail(400, 'Invalid data set ID format')
  let body: Record<string, unknown>
  let pieces: AddPieceRequest[]
  try {
    body = await readJson(req)
    pieces = parseAddPieceRequests(body.pieces)
  } catch (err) {
    throw new HttpFail(400, `Invalid request body: ${(err as Error).message}`)
  }
  if (pieces.length === 0) throw new HttpFail(400, 'At least one piece must be provided')
  if (pieces.length > MAX_ADD_PIECES_BATCH)
    throw new HttpFail(400, `piece count (${pieces.length}) exceeds the maximum allowed per AddPieces call (${MAX_ADD_PIECES_BATCH})`)
  for (const piece of pieces) {
    for (const sub of piece.subPieces) {
      try {
        parsePieceCid(sub.subPieceCid)
      } catch (err) {
        throw new HttpFail(400, `Invalid subPieceCid: ${(err as Error).message}`)
      }
    }
  }
  const dataSet = verifyDataSet(db, id)
  let extraData: Uint8Array | null
  try {
    extraData = decodeExtraData(optString(body, 'extraData'))
  } catch (err) {
    throw new HttpFail(400, `Invalid extraData format (must be hex encoded): ${(err as Error).message}`)
  }
  const prepared = await preparePieces(db, pieces)
  const extraHex = bytesToHex(extraData ?? new Uint8Array())
  const hash = await sendTx(() =>
    chain.addPieces(
      BigInt(id),
      zeroAddress,
      prepared.map((p) => p.data),
      extraHex,
      0n,
    ),
  )
  db.t.waits[hash] = { status: 'pending', success: null, reason: 'pdp-addpieces' }
  recordAdds(db, dataSet.id, hash, prepared)
  await db.save()
  log.info({ hash, dataSetId: id, pieces: prepared.length }, 'simulated Curio: addPieces sent')
  res.writeHead(201, { Location: `/pdp/data-sets/${idText}/pieces/added/${hash}` })
  res.end()
}

/** GET /pdp/data-sets/{id}/pieces/added/{txHash} (handleGetPieceAdditionStatus). */
export function handleAdditionStatus(ctx: DataSetContext, res: ServerResponse, idText: string, raw: string): void {
  const { db } = ctx
  const id = parseUint(idText)
  if (id === null) return goError(res, 400, 'Invalid data set ID format')
  const hash = cleanTxHash(raw)
  if (hash instanceof HttpFail) throw hash
  const dataSet = db.dataSet(id)
  if (!dataSet || dataSet.service !== SERVICE) throw new HttpFail(404, 'Data set not found')
  const adds = db.t.adds
    .filter((a) => a.dataSet === id && a.txHash === hash)
    .sort((a, b) => a.index - b.index || a.subPieceOffset - b.subPieceOffset)
  if (adds.length === 0) return goError(res, 404, 'Piece addition not found for given transaction')
  const wait = db.t.waits[hash]
  if (!wait) return goError(res, 404, 'Transaction status not found')
  let confirmedPieceIds: number[] | undefined
  if (wait.status === 'confirmed' && adds[0].ok === true) {
    confirmedPieceIds = [...new Set(db.t.pieces.filter((p) => p.dataSet === id && p.addTxHash === hash).map((p) => p.pieceId))].sort(
      (a, b) => a - b,
    )
    if (confirmedPieceIds.length > 0 && confirmedPieceIds.length !== adds.length) {
      return goError(
        res,
        500,
        `Mismatch in confirmed piece IDs count (${confirmedPieceIds.length}) vs number of pieces added (${adds.length}) for tx ${hash}`,
      )
    }
  }
  const body: Record<string, unknown> = {
    txHash: hash,
    txStatus: wait.status,
    dataSetId: id,
    pieceCount: new Set(adds.map((a) => a.piece)).size,
    addMessageOk: adds[0].ok,
    piecesAdded: adds[0].piecesAdded,
  }
  if (confirmedPieceIds && confirmedPieceIds.length > 0) body.confirmedPieceIds = confirmedPieceIds
  sendJson(res, 200, body)
}
