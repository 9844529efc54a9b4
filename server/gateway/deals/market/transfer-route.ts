import { Router, type Request, type Response } from 'express'
import { timingSafeEqual } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { sha256Hex } from '../../../shared/secrets.ts'
import type { ContentStore } from '../../content/index.ts'
import { GatewayError } from '../../errors.ts'
import { parseRange, type ByteRange } from '../../webdav/range.ts'
import type { DealStore } from '../types.ts'

export const TRANSFER_PATH = '/deal-transfer'

const ZEROS = new Uint8Array(256 * 1024)

/**
 * `GET /deal-transfer/<deal>` (and `HEAD`): what the provider of one proposed
 * deal downloads, for `Authorization: Bearer <token of that deal>`. Mounted
 * before the gateway's basic auth: the token is the credential, it only opens
 * this one transfer, and it dies once the deal is published or fails.
 *
 * The body is the group's CAR followed by zeros up to the deal's
 * `transferSize` (the proposal's PieceSize × 127/128), so the piece CID of
 * what the provider receives is the proposal's own: Curio takes the natural
 * size of the transfer as the piece size (the zeros are what Boost would
 * otherwise pad itself).
 *
 * Ranges, as real providers fetch: Boost
 * (filecoin-project/boost transport/httptransport/http_transport.go) sends
 * HEAD and requires `Content-Length` equal to the transfer size, then
 * (http_downloader.go) GETs transfers of 10 MiB and more in 5 parallel
 * `Range: bytes=a-b` parts, the last one ending at the size itself (one past
 * the last byte: clamped here); Curio (filecoin-project/curio
 * lib/robusthttp/robusthttp.go) always sends `Range: bytes=off-(size-1)` and
 * fails on a 200 to a resumed request. One range is answered 206 with
 * `Content-Range`; a range past the end 416 with `bytes *\/N`. Several ranges
 * get the whole body (200): RFC 9110 §14.2 lets a server ignore Range, no
 * provider asks for several, and a 200 still gives a client correct bytes
 * where a 416 would fail it. The parser is WebDAV GET's, so both agree.
 */
export function createTransferRouter(deps: { deals: DealStore; content: ContentStore }): Router {
  const router = Router()
  const handle = (req: Request<{ id: string }>, res: Response, next: (err?: unknown) => void) => {
    // Not one of ours: let WebDAV answer for whatever lives at this path.
    const header = req.headers.authorization ?? ''
    if (!/^[1-9][0-9]{0,15}$/.test(req.params.id) || !header.startsWith('Bearer ')) return next()
    serve(req, header, res).catch((err: NodeJS.ErrnoException) => {
      if (res.headersSent) return res.destroy(err)
      next(err.code === 'ENOENT' ? carGone() : err)
    })
  }
  // HEAD first: Express would otherwise answer it with the GET route, reading the whole CAR for nothing.
  router.head(`${TRANSFER_PATH}/:id`, handle)
  router.get(`${TRANSFER_PATH}/:id`, handle)

  async function serve(req: Request<{ id: string }>, header: string, res: Response): Promise<void> {
    const deal = await deps.deals.get(Number(req.params.id))
    const token = header.slice(7).trim()
    const given = Buffer.from(sha256Hex(token))
    if (!deal?.tokenHash || !token || !timingSafeEqual(given, Buffer.from(deal.tokenHash))) {
      throw new GatewayError(401, 'TRANSFER_UNAUTHORIZED', 'Unknown deal or wrong transfer token', { 'WWW-Authenticate': 'Bearer' })
    }
    const car = await deps.content.carFile(deal.groupId)
    if (!car) throw carGone()
    const carSize = (await stat(car)).size
    const size = deal.transferSize ?? carSize
    if (size < carSize) throw new Error(`Deal ${deal.id} records a transfer of ${size} bytes, less than its CAR (${carSize})`)

    res.set({ 'Content-Type': 'application/vnd.ipld.car; version=1', 'Accept-Ranges': 'bytes' })
    const range = parseRange(req.headers.range, size)
    if (range === 'unsatisfiable') {
      throw new GatewayError(416, 'RANGE_NOT_SATISFIABLE', `Range ${req.headers.range} is outside the transfer (${size} bytes)`, {
        'Content-Range': `bytes */${size}`,
      })
    }
    const { start, end } = range ?? { start: 0, end: size - 1 }
    res.status(range ? 206 : 200).set('Content-Length', String(end - start + 1))
    if (range) res.set('Content-Range', `bytes ${start}-${end}/${size}`)
    if (req.method === 'HEAD') return void res.end()
    await pipeline(Readable.from(transferBytes(car, carSize, { start, end })), res)
  }
  return router
}

const carGone = () => new GatewayError(410, 'CAR_GONE', 'The CAR of this deal is no longer on the gateway')

/** Bytes [start, end] of the transfer: the CAR's where the range covers it, zeros after. */
async function* transferBytes(car: string, carSize: number, { start, end }: ByteRange): AsyncGenerator<Uint8Array> {
  if (start < carSize) yield* createReadStream(car, { start, end: Math.min(end, carSize - 1) }) as AsyncIterable<Buffer>
  for (let at = Math.max(start, carSize); at <= end; at += ZEROS.length) yield ZEROS.subarray(0, Math.min(ZEROS.length, end - at + 1))
}
