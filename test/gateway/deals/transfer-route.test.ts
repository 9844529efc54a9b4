import express from 'express'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ContentStore } from '../../../server/gateway/content/index.ts'
import { createDealStore } from '../../../server/gateway/deals/deal-store.ts'
import type { DealStore } from '../../../server/gateway/deals/types.ts'
import { createTransferRouter, TRANSFER_PATH } from '../../../server/gateway/deals/market/transfer-route.ts'
import { gatewayErrorHandler } from '../../../server/gateway/errors.ts'
import { startServer, type RunningServer } from '../../../server/shared/http.ts'
import { createPieceHasher, padPieceCid, paddedPieceSize } from '../../../server/shared/piece.ts'
import { sha256Hex } from '../../../server/shared/secrets.ts'
import { openSql, type Sql } from '../../../server/shared/sql/index.ts'

const TOKEN = 'transfer-token-of-the-deal'
// A 1.5 MiB "CAR": the route and the piece arithmetic never look inside it.
const CAR_SIZE = 1_572_864 + 321
const car = randomBytes(CAR_SIZE)
// The CAR's own piece: fr32 takes 127 bytes to 128, so 1.5 MiB fits a 2 MiB piece.
const carPieceSize = paddedPieceSize(CAR_SIZE)
const unpadded = (pieceSize: number) => (pieceSize / 128) * 127

let dir: string
let sql: Sql
let deals: DealStore
let server: RunningServer

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'transfer-route-'))
  writeFileSync(join(dir, 'group-1.car'), car)
  sql = await openSql({ file: join(dir, 'gateway.sqlite'), schema: 'gateway' })
  deals = await createDealStore(sql)
  const content = { carFile: async (id: number) => (id === 1 ? join(dir, 'group-1.car') : undefined) } as unknown as ContentStore
  const app = express()
  app.use(createTransferRouter({ deals, content }))
  app.use(gatewayErrorHandler(pino({ level: 'silent' })))
  server = await startServer(app, 0, '127.0.0.1')
})
afterAll(async () => {
  await server.close()
  await sql.close()
  rmSync(dir, { recursive: true, force: true })
})

/** A proposed deal of group 1 whose provider downloads `transferSize` bytes (none recorded: an older deal). */
async function dealOf(transferSize?: number): Promise<string> {
  const d = await deals.create({
    groupId: 1,
    route: 'market',
    provider: 'f01000',
    pieceCid: 'baga6ea4seaq',
    startEpoch: 100,
    endEpoch: 200,
    tokenHash: sha256Hex(TOKEN),
    proposalEpoch: 40,
    ...(transferSize ? { transferSize } : {}),
  })
  return `${server.url}${TRANSFER_PATH}/${d.id}`
}

const auth = (extra: Record<string, string> = {}) => ({ headers: { Authorization: `Bearer ${TOKEN}`, ...extra } })
const body = async (res: Response) => Buffer.from(await res.arrayBuffer())
/** The CAR then zeros: what the provider must end up with. */
const expected = (size: number) => Buffer.concat([car, Buffer.alloc(size - CAR_SIZE)])

describe('CAR transfer route', () => {
  it("serves the CAR then zeros up to the deal transfer size, whose piece CID is the proposal's padded one", async () => {
    const carPiece = createPieceHasher()
    carPiece.update(car)
    const carPieceCid = carPiece.digest().pieceCid
    // The CAR's natural piece, and one a provider with an 8 MiB minimum would take.
    for (const target of [carPieceSize, 4 * carPieceSize]) {
      const url = await dealOf(unpadded(target))
      const res = await fetch(url, auth())
      expect(res.status).toBe(200)
      expect(res.headers.get('accept-ranges')).toBe('bytes')
      expect(Number(res.headers.get('content-length'))).toBe(unpadded(target))
      const got = await body(res)
      expect(got.equals(expected(unpadded(target)))).toBe(true)
      // What Curio checks: the transfer's own piece CID, at its natural size, is the proposal's.
      const hasher = createPieceHasher()
      hasher.update(got)
      const served = hasher.digest()
      expect(served.pieceSize).toBe(target)
      expect(served.pieceCid).toBe(padPieceCid(carPieceCid, carPieceSize, target))
    }
  })

  it('answers HEAD with the exact transfer length and no body, as Boost checks it before downloading', async () => {
    const size = unpadded(4 * carPieceSize)
    const url = await dealOf(size)
    const head = await fetch(url, { method: 'HEAD', ...auth() })
    expect(head.status).toBe(200)
    expect(head.headers.get('content-length')).toBe(String(size))
    expect(head.headers.get('accept-ranges')).toBe('bytes')
    expect((await head.arrayBuffer()).byteLength).toBe(0)
    // HEAD is for the token holder too.
    expect((await fetch(url, { method: 'HEAD', headers: { Authorization: 'Bearer wrong' } })).status).toBe(401)
    expect((await fetch(url, { headers: { Authorization: 'Bearer wrong', Range: 'bytes=0-9' } })).status).toBe(401)
  })

  it('reassembles byte for byte from 5 parallel ranged parts, the way Boost downloads 10 MiB and more', async () => {
    const size = unpadded(8 * carPieceSize) // 16 MiB piece: 16 646 144 bytes to transfer
    const url = await dealOf(size)
    // http_downloader.go: part i asks `bytes=a-b` with b = a + size/5 (the last b = size, one past the
    // end) and keeps the first b - a bytes of what comes back.
    const chunk = Math.floor(size / 5)
    const parts = await Promise.all(
      [0, 1, 2, 3, 4].map(async (i) => {
        const a = i * chunk
        const b = i === 4 ? size : a + chunk
        const res = await fetch(url, auth({ Range: `bytes=${a}-${b}` }))
        expect(res.status).toBe(206)
        expect(res.headers.get('content-range')).toBe(`bytes ${a}-${Math.min(b, size - 1)}/${size}`)
        return (await body(res)).subarray(0, b - a)
      }),
    )
    expect(Buffer.concat(parts).equals(expected(size))).toBe(true)
  })

  it('serves open, suffix and resumed ranges with 206, a range past the end with 416, several ranges as the whole body', async () => {
    const size = unpadded(carPieceSize)
    const url = await dealOf(size)
    const all = expected(size)

    // Curio resumes with `bytes=<received>-<size-1>` and fails on a 200.
    const resumed = await fetch(url, auth({ Range: `bytes=${CAR_SIZE - 10}-${size - 1}` }))
    expect(resumed.status).toBe(206)
    expect(resumed.headers.get('content-range')).toBe(`bytes ${CAR_SIZE - 10}-${size - 1}/${size}`)
    expect((await body(resumed)).equals(all.subarray(CAR_SIZE - 10))).toBe(true)

    const open = await fetch(url, auth({ Range: 'bytes=100-' }))
    expect(open.status).toBe(206)
    expect((await body(open)).equals(all.subarray(100))).toBe(true)

    const suffix = await fetch(url, auth({ Range: 'bytes=-5' }))
    expect(suffix.status).toBe(206)
    expect(suffix.headers.get('content-range')).toBe(`bytes ${size - 5}-${size - 1}/${size}`)
    expect((await body(suffix)).equals(Buffer.alloc(5))).toBe(true)

    const past = await fetch(url, auth({ Range: `bytes=${size}-` }))
    expect(past.status).toBe(416)
    expect(past.headers.get('content-range')).toBe(`bytes */${size}`)
    await past.arrayBuffer()

    const several = await fetch(url, auth({ Range: 'bytes=0-1,5-9' }))
    expect(several.status).toBe(200)
    expect((await body(several)).equals(all)).toBe(true)
  })

  it('serves the CAR alone for a deal recorded without a transfer size', async () => {
    const url = await dealOf()
    const head = await fetch(url, { method: 'HEAD', ...auth() })
    expect(head.headers.get('content-length')).toBe(String(CAR_SIZE))
    const tail = await fetch(url, auth({ Range: `bytes=${CAR_SIZE - 3}-` }))
    expect(tail.status).toBe(206)
    expect((await body(tail)).equals(car.subarray(CAR_SIZE - 3))).toBe(true)
  })
})
