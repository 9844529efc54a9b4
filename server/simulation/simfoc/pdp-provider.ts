import { createHash, randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { bytesToHex, getAddress, zeroAddress, type Address, type Hex } from 'viem'
import type { FaultPlan } from '../simnet/faults.ts'
import { ChainSendError, type PdpChain } from './pdp-provider-chain.ts'
import {
  ProviderDb,
  type DataSet,
  type DataSetPiece,
  type PieceAdd,
  type ProofRecord,
  type PullItem,
  type PullStatus,
} from './pdp-provider-db.ts'
import {
  paddedSizeOf,
  parsePieceCid,
  PIECE_SIZE_MAX,
  PIECE_SIZE_MIN,
  pieceCidV2,
  pieceHeight,
  type ParsedPieceCid,
} from './pdp-provider-piece.ts'
import { serveIpfs, servePiece } from './pdp-provider-retrieval.ts'
import { PieceStore, PieceTooLargeError, UploadStalledError, type StoredPiece } from './pdp-provider-store.ts'
import { CurioTasks, ipfsIndexingFromExtraData, type TaskLog } from './pdp-provider-tasks.ts'

/**
 * A simulated Curio PDP provider: Curio's PDP HTTP API (pdp/handlers.go,
 * handlers_upload.go, handlers_create.go, handlers_add.go, handlers_pull.go)
 * on loopback, with the same routes, status codes, headers, JSON and error
 * texts, and what Curio then does on chain (tasks/pdpv0): it sends its own
 * createDataSet/addPieces, follows their receipts, schedules proving periods
 * and proves possession of the pieces it stores, from their bytes on disk.
 */

/**
 * Faults a test or demo gives one provider:
 * `refuse` — it answers every write (and ping) 503 Service Unavailable, as
 *   Curio's ping does when its alerts have problems;
 * `stall` — it stops reading uploads and pulls (the client's upload hangs);
 * `lose` — the bytes of its pieces are gone, now and for every later piece:
 *   retrieval answers 404 and proofs cannot be built;
 * `stop-proving` — it keeps moving proving periods but sends no proofs.
 */
export type PdpProviderFault = 'refuse' | 'stall' | 'lose' | 'stop-proving'

export interface PdpProviderOptions {
  /** Where pieces and the provider's database live. */
  dir: string
  chain: PdpChain
  /** Record keepers (listener contracts) a public service may use: the FWSS address (Curio contract.IsRecordKeeperAllowed). */
  recordKeepers: Address[]
  fault?: PdpProviderFault | null
  /** Seeded faults: some uploads and pulls stall or break part-way (site `transfer`). */
  faults?: FaultPlan
  /**
   * Pay PDPVerifier.FIL_SYBIL_FEE() in FIL with createDataSet and create-and-add, as Curio did
   * until #1181 (the verifier refunds it when the client's USDFC fee was taken). Default false:
   * Curio now sends no value and the client pays the sybil fee in USDFC.
   */
  payFilSybilFee?: boolean
  /** Accept http:// pull sources (Curio's CURIO_PULL_ALLOW_INSECURE=1, needed on loopback). Default true. */
  pullAllowInsecure?: boolean
  /** An upload that sends nothing for this long fails (Curio's TimeoutLimitReader: 5 s). */
  uploadIdleTimeoutMs?: number
  /** A pull source that sends nothing for this long fails. Default 30 s. */
  pullIdleTimeoutMs?: number
  /** How often the provider looks at the chain head (Curio reacts to each new tipset). Default 500 ms; 0 = only on `tick()`. */
  pollMs?: number
  fetch?: typeof fetch
  log?: TaskLog
}

export interface PdpProvider {
  /** The provider's address on chain (its key's). */
  readonly address: Address
  /** The PDP API and retrieval, for any node:http server or Express app. */
  readonly handler: RequestListener
  /** The service URL once `listen` has run. */
  readonly url: string | null
  /** Listens on loopback (port 0: any free port) and starts following the chain; returns the service URL. */
  listen(port?: number, host?: string): Promise<string>
  /** One pass of the chain-driven tasks (what a new tipset triggers). */
  tick(): Promise<void>
  /** Resolves once the fault has taken effect (a `lose` has removed the bytes). */
  setFault(fault: PdpProviderFault | null): Promise<void>
  readonly fault: PdpProviderFault | null
  /** Uploads held by the `stall` fault right now. */
  stalledUploads(): number
  /** The provider's data sets and pieces as its database has them. */
  dataSets(): (DataSet & { pieces: DataSetPiece[] })[]
  /** The proofs it has sent. */
  proofs(): ProofRecord[]
  close(): Promise<void>
}

const SERVICE = 'public'
/** Curio pdp/handlers.go limits. */
const MAX_CREATE_EXTRA_DATA = 4096
const MAX_ADD_PIECES_BATCH = 40
const MAX_DELETE_EXTRA_DATA = 1024
const MAX_DELETE_BATCH = 35
const JSON_BODY_LIMIT = 1 << 20

const silentLog: TaskLog = { debug() {}, info() {}, warn() {}, error() {} }

class HttpFail extends Error {
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
function goError(res: ServerResponse, status: number, msg: string): void {
  if (res.headersSent) return void res.destroy()
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' })
  res.end(`${msg}\n`)
}

/** Curio's httpServerError: a chain error's own text, otherwise the message with an error id. */
function serverError(res: ServerResponse, status: number, msg: string, err?: unknown): void {
  if (err instanceof ChainSendError) return goError(res, status, `chain: ${err.message}`)
  goError(res, status, `${msg} [eid: ${randomUUID()}]`)
}

/** Go's json.NewEncoder(w).Encode: the JSON and a newline. */
function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' })
  res.end(`${JSON.stringify(body)}\n`)
}

async function readBody(req: IncomingMessage, limit = JSON_BODY_LIMIT): Promise<string> {
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
async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
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

const optString = (body: Record<string, unknown>, field: string): string | undefined => {
  const v = body[field]
  if (v === undefined || v === null) return undefined
  if (typeof v !== 'string') throw new Error(`json: cannot unmarshal ${typeof v} into Go struct field .${field} of type string`)
  return v
}

/** Curio decodeExtraData: optional hex, with or without 0x. */
function decodeExtraData(text: string | undefined): Uint8Array | null {
  if (text === undefined) return null
  const hex = text.startsWith('0x') ? text.slice(2) : text
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) throw new Error(`encoding/hex: invalid byte`)
  return new Uint8Array(Buffer.from(hex, 'hex'))
}

/** go-ethereum common.HexToAddress: lenient, last 20 bytes. */
function hexToAddress(text: string): Address {
  let hex = text.startsWith('0x') || text.startsWith('0X') ? text.slice(2) : text
  if (hex.length % 2 === 1) hex = `0${hex}`
  if (!/^[0-9a-fA-F]*$/.test(hex)) return zeroAddress
  hex = hex.slice(-40).padStart(40, '0')
  return getAddress(`0x${hex}`)
}

/** Curio's tx hash cleanup: 0x prefix, lower case, 66 characters of hex. */
function cleanTxHash(raw: string): string | HttpFail {
  let hash = raw.startsWith('0x') ? raw : `0x${raw}`
  hash = hash.toLowerCase()
  if (hash.length !== 66) return new HttpFail(400, 'Invalid txHash length', false)
  if (!/^0x[0-9a-f]{64}$/.test(hash)) return new HttpFail(400, 'Invalid txHash format', false)
  return hash
}

const UUID_RE = /^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/

function parseUint(text: string): number | null {
  if (!/^\d+$/.test(text)) return null
  const n = Number(text)
  return Number.isSafeInteger(n) ? n : null
}

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

export async function createPdpProvider(options: PdpProviderOptions): Promise<PdpProvider> {
  const { chain } = options
  const log = options.log ?? silentLog
  const store = new PieceStore(join(options.dir, 'store'))
  await store.init()
  const db = new ProviderDb(join(options.dir, 'db.json'))
  await db.load()
  for (const ref of db.t.pieceRefs) await store.meta(ref.pieceCid)
  // Pulls cut short by a restart run again (Curio retries a task whose machine went away).
  for (const pull of db.t.pulls) for (const item of pull.items) if (item.status === 'inProgress') item.status = 'retrying'
  const recordKeepers = new Set(options.recordKeepers.map((a) => a.toLowerCase()))
  const pullAllowInsecure = options.pullAllowInsecure ?? true
  const uploadIdleTimeoutMs = options.uploadIdleTimeoutMs ?? 5000
  let fault: PdpProviderFault | null = options.fault ?? null
  let server: Server | null = null
  let url: string | null = null
  let poller: NodeJS.Timeout | null = null
  const openRequests = new Set<ServerResponse>()
  const stallWaiters = new Set<() => void>()

  const tasks = new CurioTasks({
    db,
    store,
    chain,
    log,
    provingStopped: () => fault === 'stop-proving',
    pullsStalled: () => fault === 'stall',
    fetch: options.fetch ?? fetch,
    faults: options.faults,
    pullIdleTimeoutMs: options.pullIdleTimeoutMs ?? 30_000,
  })

  if (fault === 'lose') await store.lose()

  // ---- The "notify" step: an upload whose piece is parked becomes a pdp_pieceref (tasks/pdpv0/notify_task.go). ----

  async function notify(uploadId: string): Promise<void> {
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

  async function parked(piece: StoredPiece): Promise<void> {
    if (fault === 'lose') await store.lose(piece.v1)
  }

  /** A parked piece this provider still has whole (parked_pieces complete, long term). */
  async function parkedPiece(v1: string): Promise<StoredPiece | null> {
    const meta = await store.meta(v1)
    return meta && (await store.dataPresent(v1)) ? meta : null
  }

  // ---- Upload bodies ----

  /** The request body with Curio's idle timeout, the seeded transfer faults and the `stall` fault. */
  async function* uploadBody(req: IncomingMessage, res: ServerResponse, label: string): AsyncGenerator<Uint8Array> {
    const drawn = options.faults?.draw('transfer', label) ?? null
    const iterator = req[Symbol.asyncIterator]()
    let passed = 0
    while (true) {
      if (fault === 'stall') {
        await new Promise<void>((resolve) => {
          const wake = () => {
            stallWaiters.delete(wake)
            res.off('close', wake)
            resolve()
          }
          stallWaiters.add(wake)
          // The response closes before it is sent only when the client has gone.
          res.once('close', wake)
        })
        if (res.destroyed) throw new UploadStalledError('client went away')
        continue
      }
      let timer: NodeJS.Timeout | undefined
      const idle = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new UploadStalledError(`upload timeout: no progress (duration: ${uploadIdleTimeoutMs / 1000} Seconds)`)),
          uploadIdleTimeoutMs,
        )
      })
      let next: IteratorResult<Buffer>
      try {
        next = (await Promise.race([iterator.next(), idle])) as IteratorResult<Buffer>
      } finally {
        clearTimeout(timer)
      }
      if (next.done) return
      const chunk = new Uint8Array(next.value.buffer, next.value.byteOffset, next.value.length)
      if (drawn && passed === 0) {
        // A seeded fault strikes after the first chunk: the connection breaks, or the provider pauses.
        if (drawn.kind === 'fail') {
          req.destroy()
          throw new UploadStalledError('connection reset (simulated fault)')
        }
        yield chunk
        passed += chunk.length
        await new Promise((r) => setTimeout(r, drawn.ms))
        continue
      }
      passed += chunk.length
      yield chunk
    }
  }

  // ---- Handlers ----

  function handlePing(res: ServerResponse): void {
    if (fault === 'refuse') return serverError(res, 503, 'Service Unavailable')
    res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' })
    res.end('curio-pdp')
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
  async function handlePiecePost(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { info, notifyUrl } = await readPieceCidBody(req)
    checkPieceSize(info)
    const v1 = info.v1.toString()
    const id = randomUUID()
    if (await parkedPiece(v1)) {
      db.t.uploads[id] = { id, service: SERVICE, pieceCid: v1, rawSize: info.rawSize!, notifyUrl: notifyUrl ?? '', pieceRef: v1 }
      await notify(id)
      return sendJson(res, 200, { pieceCid: info.v2!.toString() })
    }
    db.t.uploads[id] = { id, service: SERVICE, pieceCid: v1, rawSize: info.rawSize!, notifyUrl: notifyUrl ?? '', pieceRef: null }
    await db.save()
    res.writeHead(201, { Location: `/pdp/piece/upload/${id}` })
    res.end()
  }

  /** PUT /pdp/piece/upload/{uuid} (handlePieceUpload). */
  async function handlePieceUpload(req: IncomingMessage, res: ServerResponse, uuid: string): Promise<void> {
    if (!UUID_RE.test(uuid)) throw new HttpFail(400, 'Invalid upload UUID')
    const upload = db.t.uploads[uuid.toLowerCase()]
    if (!upload) throw new HttpFail(404, 'Upload UUID not found')
    if (upload.pieceRef) throw new HttpFail(409, 'Data has already been uploaded')
    let stashed
    try {
      stashed = await store.stash(uploadBody(req, res, `upload ${uuid}`), upload.rawSize)
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
    await parked(piece)
    upload.pieceRef = piece.v1
    await notify(upload.id)
    res.writeHead(204).end()
  }

  /** GET /pdp/piece?pieceCid= (handleFindPiece). */
  function handleFindPiece(res: ServerResponse, url: URL): void {
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
  async function handleStreamingUploadUrl(res: ServerResponse): Promise<void> {
    const id = randomUUID()
    db.t.streaming[id] = { id, service: SERVICE, complete: false }
    await db.save()
    res.writeHead(201, { Location: `/pdp/piece/uploads/${id}` })
    res.end()
  }

  /** PUT /pdp/piece/uploads/{uuid} (handleStreamingUpload): CommP of what arrives, parked under it. */
  async function handleStreamingUpload(req: IncomingMessage, res: ServerResponse, uuid: string): Promise<void> {
    if (!UUID_RE.test(uuid)) throw new HttpFail(400, 'Invalid upload UUID')
    const upload = db.t.streaming[uuid.toLowerCase()]
    if (!upload) return goError(res, 404, '404 page not found')
    let stashed
    try {
      stashed = await store.stash(uploadBody(req, res, `upload ${uuid}`), PIECE_SIZE_MAX)
    } catch (err) {
      if (err instanceof PieceTooLargeError)
        throw new HttpFail(413, `piece data exceeds the maximum allowed size (${PIECE_SIZE_MAX} bytes)`)
      throw new HttpFail(500, 'Failed to store piece data', true, err)
    }
    if (stashed.commitment.rawSize < PIECE_SIZE_MIN) {
      await store.removeStash(stashed.stashId)
      throw new HttpFail(400, `piece data is below the minimum allowed size (${PIECE_SIZE_MIN} bytes)`)
    }
    const piece = await store.park(stashed.stashId, stashed.commitment)
    await parked(piece)
    Object.assign(upload, { complete: true, pieceCid: piece.v1, rawSize: piece.rawSize })
    await db.save()
    res.writeHead(204).end()
  }

  /** POST /pdp/piece/uploads/{uuid} (handleFinalizeStreamingUpload): the client's piece CID must be the one computed. */
  async function handleFinalizeStreamingUpload(req: IncomingMessage, res: ServerResponse, uuid: string): Promise<void> {
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
    await notify(id)
    res.writeHead(200).end()
  }

  /** Curio transformAddPiecesRequest: each piece's sub-pieces must be pieces this provider holds for the service. */
  async function preparePieces(pieces: AddPieceRequest[]): Promise<PreparedPiece[]> {
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

  function recordAdds(dataSet: number | null, txHash: string, prepared: PreparedPiece[]): void {
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

  function recordKeeperFrom(body: Record<string, unknown>): Address {
    const text = optString(body, 'recordKeeper') ?? ''
    if (text === '') throw new HttpFail(400, 'recordKeeper address is required')
    const address = hexToAddress(text)
    if (address === zeroAddress) throw new HttpFail(400, 'Invalid recordKeeper address')
    if (!recordKeepers.has(address.toLowerCase())) throw new HttpFail(403, 'recordKeeper address not allowed for public service')
    return address
  }

  async function sybilValue(): Promise<bigint> {
    return options.payFilSybilFee ? await chain.filSybilFee() : 0n
  }

  async function sendTx(send: () => Promise<Hex>): Promise<string> {
    try {
      return (await send()).toLowerCase()
    } catch (err) {
      throw new HttpFail(500, `Failed to send transaction: ${(err as Error).message}`, true, err)
    }
  }

  /** POST /pdp/data-sets (handleCreateDataSet). */
  async function handleCreateDataSet(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body: Record<string, unknown>
    try {
      body = await readJson(req)
    } catch (err) {
      throw new HttpFail(400, `Invalid JSON in request body: ${(err as Error).message}`)
    }
    const recordKeeper = recordKeeperFrom(body)
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
    const value = await sybilValue()
    const hash = await sendTx(() => chain.createDataSet(recordKeeper, extraHex, value))
    db.t.waits[hash] = { status: 'pending', success: null, reason: 'pdp-mkdataset' }
    db.t.creates[hash] = { txHash: hash, service: SERVICE, ok: null, dataSetCreated: false, extraData: extraHex }
    await db.save()
    log.info({ hash, recordKeeper }, 'simulated Curio: createDataSet sent')
    res.writeHead(201, { Location: `/pdp/data-sets/created/${hash}` })
    res.end()
  }

  /** POST /pdp/data-sets/create-and-add (handleCreateDataSetAndAddPieces): addPieces on the new-data-set id 0. */
  async function handleCreateAndAdd(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body: Record<string, unknown>
    let pieces: AddPieceRequest[]
    try {
      body = await readJson(req)
      pieces = parseAddPieceRequests(body.pieces)
    } catch (err) {
      throw new HttpFail(400, `Invalid JSON in request body: ${(err as Error).message}`)
    }
    const recordKeeper = recordKeeperFrom(body)
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
    const prepared = await preparePieces(pieces)
    const extraHex = bytesToHex(extraData ?? new Uint8Array())
    const value = await sybilValue()
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
    recordAdds(null, hash, prepared)
    await db.save()
    log.info({ hash, pieces: prepared.length, ipfsIndexing: ipfsIndexingFromExtraData(extraHex) }, 'simulated Curio: create-and-add sent')
    res.writeHead(201, { Location: `/pdp/data-sets/created/${hash}` })
    res.end()
  }

  /** Curio verifyDataSetForService. */
  function verifyDataSet(id: number): DataSet {
    const dataSet = db.dataSet(id)
    if (!dataSet || dataSet.service !== SERVICE) throw new HttpFail(404, 'Data set not found')
    if (dataSet.unrecoverableEpoch != null)
      throw new HttpFail(409, 'data set has been terminated due to unrecoverable proving failure', false)
    return dataSet
  }

  /** POST /pdp/data-sets/{id}/pieces (handleAddPieceToDataSet). */
  async function handleAddPieces(req: IncomingMessage, res: ServerResponse, idText: string): Promise<void> {
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
    const dataSet = verifyDataSet(id)
    let extraData: Uint8Array | null
    try {
      extraData = decodeExtraData(optString(body, 'extraData'))
    } catch (err) {
      throw new HttpFail(400, `Invalid extraData format (must be hex encoded): ${(err as Error).message}`)
    }
    const prepared = await preparePieces(pieces)
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
    recordAdds(dataSet.id, hash, prepared)
    await db.save()
    log.info({ hash, dataSetId: id, pieces: prepared.length }, 'simulated Curio: addPieces sent')
    res.writeHead(201, { Location: `/pdp/data-sets/${idText}/pieces/added/${hash}` })
    res.end()
  }

  /** GET /pdp/data-sets/created/{txHash} (handleGetDataSetCreationStatus). */
  function handleCreationStatus(res: ServerResponse, raw: string): void {
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

  function v2Of(v1: string, rawSize: number): string {
    return pieceCidV2(parsePieceCid(v1).root, rawSize).toString()
  }

  /** GET /pdp/data-sets/{id} (handleGetDataSet). */
  function handleGetDataSet(res: ServerResponse, idText: string): void {
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

  /** GET /pdp/data-sets/{id}/pieces/added/{txHash} (handleGetPieceAdditionStatus). */
  function handleAdditionStatus(res: ServerResponse, idText: string, raw: string): void {
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

  /** GET /pdp/data-sets/{id}/pieces/{pieceId} (handleGetDataSetPiece). */
  function handleGetPiece(res: ServerResponse, idText: string, pieceText: string): void {
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
  async function handleDeletePiece(req: IncomingMessage, res: ServerResponse, idText: string, pieceText: string): Promise<void> {
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
    sendJson(res, 200, { txHash: hash })
  }

  /** POST /pdp/piece/pull (handlers_pull.go HandlePull): idempotent on (service, sha256(extraData), dataSetId, recordKeeper). */
  async function handlePull(req: IncomingMessage, res: ServerResponse): Promise<void> {
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
    if (dataSetId > 0) verifyDataSet(dataSetId)
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
    // The client must be able to add these pieces: eth_call of addPieces from this provider.
    try {
      await chain.validateAddPieces(
        BigInt(dataSetId),
        recordKeeper,
        infos.map((info) => bytesToHex(info.v2!.bytes)),
        bytesToHex(extraData!),
        0n,
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
    tasks.startPulls()
    respondPull(res, items)
  }

  function respondPull(res: ServerResponse, items: PullItem[]): void {
    const pieces = [...items]
      .sort((a, b) => (a.pieceCid < b.pieceCid ? -1 : a.pieceCid > b.pieceCid ? 1 : a.sourceUrl < b.sourceUrl ? -1 : 1))
      .map((item) => ({ pieceCid: v2Of(item.pieceCid, item.rawSize), status: item.status }))
    sendJson(res, 200, { status: overallPullStatus(pieces.map((p) => p.status)), pieces })
  }

  // ---- Routing (Curio pdp/handlers.go Routes, market/retrieval Router) ----

  const WRITES = new Set(['POST', 'PUT', 'DELETE'])

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost')
    const path = url.pathname.length > 1 && url.pathname.endsWith('/') ? url.pathname.slice(0, -1) : url.pathname
    const method = req.method ?? 'GET'
    const parts = path.split('/').slice(1)
    if (parts[0] === 'piece' && parts.length === 2 && (method === 'GET' || method === 'HEAD'))
      return servePiece({ db, store }, req, res, parts[1])
    if (parts[0] === 'ipfs' && parts.length >= 2 && (method === 'GET' || method === 'HEAD')) return serveIpfs({ db, store }, req, res, url)
    if (parts[0] !== 'pdp') return goError(res, 404, '404 page not found')
    if (fault === 'refuse' && WRITES.has(method)) return serverError(res, 503, 'Service Unavailable')
    const allow = (...methods: string[]) => {
      if (methods.includes(method)) return true
      res.writeHead(405, { Allow: methods.join(', ') }).end()
      return false
    }
    const [, a, b, c, d, e] = parts
    if (a === 'ping' && parts.length === 2) return allow('GET') ? handlePing(res) : undefined
    if (a === 'piece') {
      if (parts.length === 2) {
        if (method === 'POST') return handlePiecePost(req, res)
        return allow('GET', 'POST') ? handleFindPiece(res, url) : undefined
      }
      if (b === 'upload' && parts.length === 4) return allow('PUT') ? handlePieceUpload(req, res, c) : undefined
      if (b === 'uploads' && parts.length === 3) return allow('POST') ? handleStreamingUploadUrl(res) : undefined
      if (b === 'uploads' && parts.length === 4) {
        if (method === 'PUT') return handleStreamingUpload(req, res, c)
        return allow('PUT', 'POST') ? handleFinalizeStreamingUpload(req, res, c) : undefined
      }
      if (b === 'pull' && parts.length === 3) return allow('POST') ? handlePull(req, res) : undefined
    }
    if (a === 'data-sets') {
      if (parts.length === 2) return allow('POST') ? handleCreateDataSet(req, res) : undefined
      if (b === 'create-and-add' && parts.length === 3) return allow('POST') ? handleCreateAndAdd(req, res) : undefined
      if (b === 'created' && parts.length === 4) return allow('GET') ? handleCreationStatus(res, c) : undefined
      if (parts.length === 3) return allow('GET') ? handleGetDataSet(res, b) : undefined
      if (c === 'pieces' && parts.length === 4) return allow('POST') ? handleAddPieces(req, res, b) : undefined
      if (c === 'pieces' && d === 'added' && parts.length === 6) return allow('GET') ? handleAdditionStatus(res, b, e) : undefined
      if (c === 'pieces' && parts.length === 5) {
        if (method === 'DELETE') return handleDeletePiece(req, res, b, d)
        return allow('GET', 'DELETE') ? handleGetPiece(res, b, d) : undefined
      }
    }
    goError(res, 404, '404 page not found')
  }

  const handler: RequestListener = (req, res) => {
    openRequests.add(res)
    res.once('close', () => openRequests.delete(res))
    route(req, res).catch((err: unknown) => {
      if (res.headersSent) return void res.destroy()
      if (err instanceof HttpFail) {
        if (err.status >= 500) log.warn({ err: err.cause ?? err, url: req.url }, `simulated Curio: ${err.message}`)
        if (err.cause instanceof ChainSendError) return serverError(res, err.status, err.message, err.cause)
        return err.withEid ? serverError(res, err.status, err.message) : goError(res, err.status, err.message)
      }
      log.error({ err, url: req.url }, 'simulated Curio: handler failed')
      serverError(res, 500, 'Internal server error')
    })
  }

  const provider: PdpProvider = {
    address: chain.address,
    handler,
    get url() {
      return url
    },
    get fault() {
      return fault
    },
    async listen(port = 0, host = '127.0.0.1') {
      if (server) return url!
      server = createServer(handler)
      await new Promise<void>((resolve, reject) => {
        server!.once('error', reject)
        server!.listen(port, host, () => resolve())
      })
      const address = server.address() as AddressInfo
      url = `http://${host}:${address.port}`
      const pollMs = options.pollMs ?? 500
      if (pollMs > 0) {
        const run = () => {
          tasks.tick().catch((err: unknown) => log.warn({ err }, 'simulated Curio: chain pass failed'))
        }
        poller = setInterval(run, pollMs)
        poller.unref()
        run()
      }
      log.info({ url, address: chain.address }, 'simulated Curio PDP provider listening')
      return url
    },
    tick: () => tasks.tick(),
    async setFault(next) {
      fault = next
      if (next === 'lose') await store.lose()
      if (next !== 'stall') {
        for (const wake of [...stallWaiters]) wake()
        tasks.startPulls()
      }
    },
    stalledUploads: () => stallWaiters.size,
    dataSets: () => Object.values(db.t.dataSets).map((d) => ({ ...d, pieces: db.t.pieces.filter((p) => p.dataSet === d.id) })),
    proofs: () => [...db.t.proofs],
    async close() {
      if (poller) clearInterval(poller)
      poller = null
      for (const wake of [...stallWaiters]) wake()
      for (const res of openRequests) res.destroy()
      if (server) {
        const closed = new Promise<void>((resolve) => server!.close(() => resolve()))
        server.closeAllConnections()
        await closed
      }
      server = null
      await tasks.settled()
      await db.flush()
    },
  }
  return provider
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
