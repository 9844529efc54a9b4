import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { CID } from 'multiformats/cid'
import { create as createDigest } from 'multiformats/hashes/digest'
import { pino } from 'pino'
import type { ContentStore, GroupRecord } from '../../../../server/gateway/content/index.ts'
import { createDealStore } from '../../../../server/gateway/deals/deal-store.ts'
import { emptyReport } from '../../../../server/gateway/deals/deal-engine.ts'
import { createPdpRoute, createRouteContext, type StorageRoute } from '../../../../server/gateway/deals/index.ts'
import type { DealStore, GroupDeal, TickReport } from '../../../../server/gateway/deals/types.ts'
import { openSql, type Sql } from '../../../../server/shared/sql/index.ts'
import { PDP_MAX_UPLOAD_BYTES } from '../../../../server/shared/piece.ts'
import { FakeFoc } from './fake-foc.ts'

/** A real CommP of 200 bytes, as the gateway's sealing gives it (the route names the piece by its v2 CID). */
const PIECE_CID = 'baga6ea4seaqfypbq4qqhwgsgbm3ymsxzu6kpokgzkpl7mhmg6eia2vrhkdlminy'

/** Group `id`'s piece CID: PIECE_CID with the digest's first byte changed, so that no two groups share a piece on chain. */
function pieceCidOf(id: number): string {
  const cid = CID.parse(PIECE_CID)
  const bytes = Uint8Array.from(cid.multihash.digest)
  bytes[0] = (bytes[0] + id) % 256
  return CID.create(1, cid.code, createDigest(cid.multihash.code, bytes)).toString()
}
const EPOCH_SECONDS = 30

export interface PdpHarness {
  foc: FakeFoc
  route: StorageRoute
  deals: DealStore
  /** Groups the content store offers, ready for deals. */
  groups: GroupRecord[]
  /** Log lines, as JSON objects. */
  logs: { level: number; msg: string }[]
  /** Adds a sealed group of `carSize` bytes (a piece of `pieceSize`, default 256 bytes). */
  group(carSize?: number, pieceSize?: number): GroupRecord
  /** Moves the gateway's clock and the fake chain on by `epochs`. */
  advance(epochs: number): void
  /** One pass as the engine makes it: follow, then place. */
  pass(): Promise<TickReport>
  /** Waits for the uploads under way to settle. */
  settled(): Promise<void>
  rows(groupId?: number): Promise<GroupDeal[]>
  /** The route as a new process makes it (after a restart), over the same store, chain and clock. */
  reopen(): Promise<PdpHarness>
  close(): Promise<void>
}

export interface PdpHarnessOptions {
  copies?: number
  autoDeposit?: boolean
  uploadIdleMs?: number
  maxUploads?: number
  /** The largest CAR one upload takes (default the SDK's). */
  maxUploadBytes?: number
}

/**
 * The PDP route over the fake Onchain Cloud, a real deal store (SQLite in a
 * temp dir) and a content store of sealed groups with tiny CARs on disk: each
 * verb runs in milliseconds, the clock and the chain moved by the test.
 */
export async function pdpHarness(o: PdpHarnessOptions = {}): Promise<PdpHarness> {
  const dir = mkdtempSync(join(tmpdir(), 'pdp-route-'))
  const sql: Sql = await openSql({ file: join(dir, 'gateway.sqlite'), schema: 'gateway' })
  const clock = { now: Date.UTC(2026, 10, 27) }
  const now = () => clock.now
  const deals = await createDealStore(sql, now)
  const foc = new FakeFoc()
  const groups: GroupRecord[] = []
  const logs: PdpHarness['logs'] = []
  const logger = pino(
    { level: 'debug' },
    new Writable({
      write(chunk, _encoding, done) {
        logs.push(JSON.parse(String(chunk)))
        done()
      },
    }),
  )
  const content = {
    groups: async () => groups,
    carFile: async (id: number) => join(dir, `${id}.car`),
    carRoot: async () => 'bafyreigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi',
  } as unknown as ContentStore
  const makeRoute = () =>
    createPdpRoute(createRouteContext({ deals, content, logger, now, callTimeoutMs: 1_000, retryAfterEpochs: 120 }), {
      client: foc,
      copies: o.copies ?? 2,
      autoDeposit: o.autoDeposit ?? false,
      maxUploadBytes: o.maxUploadBytes ?? PDP_MAX_UPLOAD_BYTES,
      uploadIdleMs: o.uploadIdleMs ?? 200,
      maxUploads: o.maxUploads ?? 2,
      clock: foc.clock,
      pollMs: 3 * 60_000,
    })
  const over = (route: StorageRoute, close: () => Promise<void>): PdpHarness => ({
    foc,
    route,
    deals,
    groups,
    logs,
    group(carSize = 200, pieceSize = 256) {
      const g: GroupRecord = {
        id: groups.length + 1,
        state: 'ready_for_deals',
        size: carSize,
        pieceCid: pieceCidOf(groups.length + 1),
        pieceSize,
        carSize,
        retrievableCopies: 0,
        deals: [],
        createdMs: 0,
        updatedMs: 0,
      }
      const file = join(dir, `${g.id}.car`)
      // A large CAR as a sparse file of zeros: a real group's size costs neither memory nor disk here.
      if (carSize > 1 << 20) {
        writeFileSync(file, '')
        truncateSync(file, carSize)
      } else writeFileSync(file, new Uint8Array(carSize).fill(g.id))
      groups.push(g)
      return g
    },
    advance(epochs) {
      clock.now += epochs * EPOCH_SECONDS * 1000
      foc.epoch += epochs
    },
    async pass() {
      const r = emptyReport()
      await route.follow(foc.epoch, r)
      await route.place(foc.epoch, r, (g) => g.state === 'ready_for_deals')
      return r
    },
    async settled() {
      // The route says a group's transfer is pending while its upload runs (fake uploads end in milliseconds). One wait at
      // least: an upload that failed at once is no longer pending before what its end sets off (when it settled) has run.
      let i = 0
      do await new Promise((r) => setTimeout(r, 10))
      while (++i < 500 && groups.some((g) => route.transferPending(g.id, [])))
    },
    rows: (groupId) => (groupId === undefined ? deals.audit() : deals.ofGroup(groupId)),
    async reopen() {
      const next = makeRoute()
      reopened.push(next)
      return over(next, () => next.stop())
    },
    close,
  })
  const reopened: StorageRoute[] = []
  const first = makeRoute()
  return over(first, async () => {
    for (const route of [first, ...reopened]) await route.stop()
    await sql.close()
    rmSync(dir, { recursive: true, force: true })
  })
}
