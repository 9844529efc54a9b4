import { randomUUID } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { bytesToHex } from 'viem'
import type { ProviderDb } from './pdp-provider-db.ts'
import { goError, HttpFail, optString, readJson, sendJson, SERVICE, UUID_RE } from './pdp-provider-http.ts'
import { parsePieceCid, PIECE_SIZE_MAX, PIECE_SIZE_MIN, type ParsedPieceCid } from './pdp-provider-piece.ts'
import { PieceTooLargeError, type PieceStore, type StoredPiece } from './pdp-provider-store.ts'
import type { TaskLog } from './pdp-provider-tasks.ts'
import type { UploadBodies } from './pdp-provider-upload-body.ts'

/**
 * Uploads to a simulated Curio (pdp/handlers_upload.go): a piece announced
 * by its CID then sent whole, or streamed first and named after; either way
 * its CommP is checked, it is parked in the store and becomes a piece the
 * provider holds for the service.
 */

export interface UploadContext {
  db: ProviderDb
  store: PieceStore
  log: TaskLog
  bodies: UploadBodies
  /** True while the provider loses the bytes of every piece it parks (the `lose` fault). */
  piecesLost(): boolean
}

/** The "notify" step: an upload whose piece is parked becomes a pdp_pieceref (tasks/pdpv0/notify_task.go). */
async function notify(ctx: UploadContext, uploadId: string): Promise<void> {
  const { db } = ctx
  const upload = db.t.uploads[uploadId]
  if (!upload?.pieceRef) return
  db.t.pieceRefs.push({
    id: db.nextId(),
    service: upload.service,
    pieceCid: upload.pieceCid,
    rawSize: upload.rawSize,
    createdAt: Date.now(),
    needsIndexing: false,
    indexed: false,
  })
  delete db.t.uploads[uploadId]
  await db.save()
}

/** A piece just parked; under the `lose` fault its bytes go at once. */
async function parked(ctx: UploadContext, piece: StoredPiece): Promise<void> {
  if (ctx.piecesLost()) await ctx.store.lose(piece.v1)
}

/** A parked piece this provider still has whole (parked_pieces complete, long term). */
async function parkedPiece(ctx: UploadContext, v1: string): Promise<StoredPiece | null> {
  const { store } = ctx
  const meta = await store.meta(v1)
  return meta && (await store.dataPresent(v1)) ? meta : null
}

function checkPieceSize(info: ParsedPieceCid): void {
  if (info.rawSize! < PIECE_SIZE_MIN) throw new HttpFail(400, `piece data is below the minimum allowed size (${PIECE_SIZE_MIN} bytes)`)
  if (info.rawSize! > PIECE_SIZE_MAX) throw new HttpFail(413, `piece data exceeds the maximum allowed size (${PIECE_SIZE_MAX} bytes)`)
}

/** The `{ pieceCid, notify }` body both upload handlers take, with Curio's 400 answers for a bad body or piece CID. */
async function readPieceCidBody(req: IncomingMessage): Promise<{ info: ParsedPieceCid; notifyUrl?: string }> {
  let pieceCidText: string | undefined
  let notifyUrl: string | undefined
  try {
    const body = await readJson(req)
    pieceCidText = optString(body, 'pieceCid')
    notifyUrl = optString(body, 'notify')
  } catch (err) {
    throw new HttpFail(400, `Invalid request body: ${(err as Error).message}`)
  }
  try {
    return { info: parsePieceCid(pieceCidText ?? '', true), notifyUrl }
  } catch (err) {
    throw new HttpFail(400, `Invalid request body: invalid pieceCid: ${(err as Error).message}`)
  }
}

/** POST /pdp/piece (handlers_upload.go handlePiecePost). */
export async function handlePiecePost(ctx: UploadContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { db } = ctx
  const { info, notifyUrl } = await readPieceCidBody(req)
  checkPieceSize(info)
  const v1 = info.v1.toString()
  const id = randomUUID()
  if (await parkedPiece(ctx, v1)) {
    db.t.uploads[id] = { id, service: SERVICE, pieceCid: v1, rawSize: info.rawSize!, notifyUrl: notifyUrl ?? '', pieceRef: v1 }
    await notify(ctx, id)
    return sendJson(res, 200, { pieceCid: info.v2!.toString() })
  }
  db.t.uploads[id] = { id, service: SERVICE, pieceCid: v1, rawSize: info.rawSize!, notifyUrl: notifyUrl ?? '', pieceRef: null }
  await db.save()
  res.writeHead(201, { Location: `/pdp/piece/upload/${id}` })
  res.end()
}

/** PUT /pdp/piece/upload/{uuid} (handlePieceUpload). */
export async function handlePieceUpload(ctx: UploadContext, req: IncomingMessage, res: ServerResponse, uuid: string): Promise<void> {
  const { db, store, log, bodies } = ctx
  if (!UUID_RE.test(uuid)) throw new HttpFail(400, 'Invalid upload UUID')
  const upload = db.t.uploads[uuid.toLowerCase()]
  if (!upload) throw new HttpFail(404, 'Upload UUID not found')
  if (upload.pieceRef) throw new HttpFail(409, 'Data has already been uploaded')
  let stashed
  try {
    stashed = await store.stash(bodies.read(req, res, `upload ${uuid}`), upload.rawSize)
  } catch (err) {
    if (err instanceof PieceTooLargeError)
      throw new HttpFail(400, `piece data exceeds the size declared in pieceCid (${upload.rawSize} bytes)`)
    throw new HttpFail(500, 'Failed to store piece data', true, err)
  }
  const { stashId, commitment } = stashed
  if (commitment.rawSize !== upload.rawSize) {
    await store.removeStash(stashId)
    throw new HttpFail(400, 'Piece size does not match the expected size')
  }
  const expected = parsePieceCid(upload.pieceCid)
  if (Buffer.compare(Buffer.from(commitment.root), Buffer.from(expected.root)) !== 0) {
    await store.removeStash(stashId)
    log.warn(
      { computed: bytesToHex(commitment.root), expected: bytesToHex(expected.root) },
      'simulated Curio: computed hash does not match expected hash',
    )
    throw new HttpFail(400, 'Computed hash does not match expected hash')
  }
  const piece = await store.park(stashId, commitment)
  await parked(ctx, piece)
  upload.pieceRef = piece.v1
  await notify(ctx, upload.id)
  res.writeHead(204).end()
}

/** GET /pdp/piece?pieceCid= (handleFindPiece). */
export function handleFindPiece(ctx: UploadContext, res: ServerResponse, url: URL): void {
  const { db } = ctx
  let info: ParsedPieceCid
  try {
    info = parsePieceCid(url.searchParams.get('pieceCid') ?? '', true)
  } catch (err) {
    throw new HttpFail(400, `Failed to parse CID: ${(err as Error).message}`)
  }
  if (!db.pieceRefByCid(info.v1.toString())) return goError(res, 404, '404 page not found')
  sendJson(res, 200, { pieceCid: info.v2!.toString() })
}

/** POST /pdp/piece/uploads (handleStreamingUploadURL). */
export async function handleStreamingUploadUrl(ctx: UploadContext, res: ServerResponse): Promise<void> {
  const { db } = ctx
  const id = randomUUID()
  db.t.streaming[id] = { id, service: SERVICE, complete: false }
  await db.save()
  res.writeHead(201, { Location: `/pdp/piece/uploads/${id}` })
  res.end()
}

/** PUT /pdp/piece/uploads/{uuid} (handleStreamingUpload): CommP of what arrives, parked under it. */
export async function handleStreamingUpload(ctx: UploadContext, req: IncomingMessage, res: ServerResponse, uuid: string): Promise<void> {
  const { db, store, bodies } = ctx
  if (!UUID_RE.test(uuid)) throw new HttpFail(400, 'Invalid upload UUID')
  const upload = db.t.streaming[uuid.toLowerCase()]
  if (!upload) return goError(res, 404, '404 page not found')
  let stashed
  try {
    stashed = await store.stash(bodies.read(req, res, `upload ${uuid}`), PIECE_SIZE_MAX)
  } catch (err) {
    if (err instanceof PieceTooLargeError) throw new HttpFail(413, `piece data exceeds the maximum allowed size (${PIECE_SIZE_MAX} bytes)`)
    throw new HttpFail(500, 'Failed to store piece data', true, err)
  }
  if (stashed.commitment.rawSize < PIECE_SIZE_MIN) {
    await store.removeStash(stashed.stashId)
    throw new HttpFail(400, `piece data is below the minimum allowed size (${PIECE_SIZE_MIN} bytes)`)
  }
  const piece = await store.park(stashed.stashId, stashed.commitment)
  await parked(ctx, piece)
  Object.assign(upload, { complete: true, pieceCid: piece.v1, rawSize: piece.rawSize })
  await db.save()
  res.writeHead(204).end()
}

/** POST /pdp/piece/uploads/{uuid} (handleFinalizeStreamingUpload): the client's piece CID must be the one computed. */
export async function handleFinalizeStreamingUpload(
  ctx: UploadContext,
  req: IncomingMessage,
  res: ServerResponse,
  uuid: string,
): Promise<void> {
  const { db } = ctx
  if (!UUID_RE.test(uuid)) throw new HttpFail(400, 'Invalid upload UUID')
  const upload = db.t.streaming[uuid.toLowerCase()]
  if (!upload) return goError(res, 404, '404 page not found')
  const { info, notifyUrl } = await readPieceCidBody(req)
  if (!upload.complete || upload.pieceCid === undefined) throw new HttpFail(500, 'Database error')
  // Size first: a smaller tree with the same root must not pass (Curio's comment).
  if (info.rawSize !== upload.rawSize) throw new HttpFail(400, 'Invalid request body: pieceCid size does not match uploaded piece size')
  if (info.v1.toString() !== upload.pieceCid)
    throw new HttpFail(400, 'Invalid request body: pieceCid does not match the calculated pieceCid for the uploaded piece')
  const id = upload.id
  db.t.uploads[id] = {
    id,
    service: upload.service,
    pieceCid: upload.pieceCid,
    rawSize: info.rawSize!,
    notifyUrl: notifyUrl ?? '',
    pieceRef: upload.pieceCid,
  }
  delete db.t.streaming[id]
  await notify(ctx, id)
  res.writeHead(200).end()
}
