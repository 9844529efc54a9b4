import { createReadStream } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { Readable } from 'node:stream'
import { isNetworkError, timedOut } from '../../../network/errors.ts'
import { FocFundsError, type FocClient, type FocStored, type FocStoreEvent } from '../../../network/foc/client.ts'
import type { CopyFailure } from '../../../shared/contracts/copy-failure.ts'
import { pieceCidV2 } from '../../../shared/piece.ts'
import type { GroupRecord } from '../../content/index.ts'
import type { GroupDeal, RouteContext, TickReport } from '../types.ts'
import type { PdpFunds } from './funding.ts'
import { providerName } from './provider-name.ts'
import type { PdpRouteOptions, PdpUpload } from './types.ts'

/** The Synapse SDK's smallest upload (SIZE_CONSTANTS.MIN_UPLOAD_BYTES): a smaller CAR is sent with zeros after it. */
const MIN_UPLOAD_BYTES = 127
/** Our data sets' metadata: providers that index IPFS content index the CARs (funding asks about the same data sets). */
export const DATA_SET_METADATA: Record<string, string> = { withIPFSIndexing: '' }

/** Bytes read from the CAR file at a time: a full group's CAR (up to 1 GiB) in a thousand reads rather than 16 384 of 64 KiB. */
const READ_CHUNK_BYTES = 1 << 20

/** The CAR as the SDK takes it: streamed from disk, or whole and padded with zeros when under its minimum. */
async function carSource(path: string, carSize: number): Promise<Uint8Array | ReadableStream<Uint8Array>> {
  if (carSize >= MIN_UPLOAD_BYTES)
    return Readable.toWeb(createReadStream(path, { highWaterMark: READ_CHUNK_BYTES })) as ReadableStream<Uint8Array>
  const bytes = new Uint8Array(MIN_UPLOAD_BYTES)
  bytes.set(await readFile(path))
  return bytes
}

/** The v2 piece CID the group is uploaded (and found on chain) as: its CAR's, at least the SDK's smallest upload. */
export const uploadPieceCid = (g: GroupRecord) => pieceCidV2(g.pieceCid!, Math.max(g.carSize!, MIN_UPLOAD_BYTES))

/**
 * The rows of one upload: one per provider that holds the piece, made
 * `proposed` when the SDK says so (stored, or pulled from the first), before
 * the SDK sends any add (it waits for every provider to hold the piece): the
 * group, the provider and the piece CID are on record before an add can be
 * sent, and a stop from then on leaves the row to be looked up on chain
 * (adopt.ts). The add transaction is recorded when the provider answers. The
 * SDK's callbacks cannot wait: what they record is awaited (`settled`)
 * before the result is. On SQLite a row's write is done before the SDK's
 * next network call; where it is not (PostgreSQL), an add that outruns it
 * is still found by the chain lookup made before the group is uploaded again.
 */
function uploadRows(o: Pick<UploadsOptions, 'deals' | 'logger'>, g: GroupRecord, pieceCid: string, head: number) {
  const { deals, logger } = o
  const rows = new Map<number, Promise<GroupDeal>>()
  const recorded: Promise<unknown>[] = []
  const row = (providerId: number) =>
    rows.get(providerId) ??
    rows
      .set(
        providerId,
        deals.create({
          groupId: g.id,
          route: 'pdp',
          provider: providerName(providerId),
          pieceCid,
          startEpoch: head,
          endEpoch: head,
          proposalEpoch: head,
        }),
      )
      .get(providerId)!
  const record = (work: () => Promise<unknown>) =>
    recorded.push(work().catch((err) => logger.warn({ err, groupId: g.id }, 'recording a PDP upload step failed')))
  return {
    rows,
    row,
    settled: () => Promise.all(recorded),
    /** What one SDK event changes: the upload's progress, and the provider's row. */
    on(e: FocStoreEvent, state: PdpUpload) {
      if (e.kind === 'uploaded') state.bytes = e.bytes
      else if (e.kind === 'stored' || e.kind === 'pulled') record(async () => deals.markProposed((await row(e.providerId)).id, {}))
      else if (e.kind === 'adding') {
        state.adding++
        record(async () => {
          const d = await row(e.providerId)
          await deals.markProposed(d.id, {})
          await deals.recordAddTx(d.id, e.txHash)
        })
      } else if (e.kind === 'added')
        record(async () => deals.markPublished((await row(e.providerId)).id, { dataSetId: Number(e.dataSetId) }))
    },
  }
}

/** Uploads under way, one per group, and why a group's last one stored no copy. */
export interface Uploads {
  /**
   * Starts the group's upload through the SDK to `copies` providers (none of
   * `exclude`), in the background: the SDK picks them (endorsed ones first),
   * uploads to one and the others pull from it, and adds the piece to our data
   * set on each. An upload with no progress for `uploadIdleMs` (no bytes taken,
   * no step on chain) has stalled and is cut short. Returns when it settles,
   * or undefined when the group has no CAR to send.
   */
  start(g: GroupRecord, copies: number, exclude: number[], head: number, r: TickReport): Promise<{ done: Promise<void> } | undefined>
  /** Where the group's upload stands, while one runs. */
  of(groupId: number): PdpUpload | undefined
  /** How many run. */
  count(): number
  /** Bytes of the uploads under way, which the account has not yet locked funds for. */
  pendingBytes(): number
  /** Why the last upload of a group stored no copy (providers refused, stalled, none to ask). */
  refused(groupId: number): string | undefined
  /** Cuts every upload short and waits for each to settle. */
  stop(): Promise<void>
}

export interface UploadsOptions extends Pick<RouteContext, 'deals' | 'content' | 'logger' | 'fail'>, Pick<PdpRouteOptions, 'uploadIdleMs'> {
  client: Pick<FocClient, 'store'>
  funds: Pick<PdpFunds, 'uploadRefused'>
}

/** An upload under way: where it stands, how to cut it short, and when it settles. */
interface Upload {
  upload: PdpUpload
  done: Promise<void>
  controller: AbortController
}

export function createUploads(o: UploadsOptions): Uploads {
  const { deals, content, logger, client } = o
  const running = new Map<number, Upload>()
  const refused = new Map<number, string>()

  /** What the SDK stored: each copy recorded on chain; each provider that failed fails its row (not asked again for a while). */
  async function recordStored(g: GroupRecord, rows: ReturnType<typeof uploadRows>, stored: FocStored, r: TickReport) {
    for (const copy of stored.copies) {
      const d = await rows.row(copy.providerId)
      await deals.markProposed(d.id, {})
      await deals.markPublished(d.id, { dataSetId: Number(copy.dataSetId) })
      const { dataSetId, pieceId, addedEpoch, retrievalUrl } = copy
      await deals.recordPdpCopy(d.id, { dataSetId: Number(dataSetId), pieceId: Number(pieceId), addedEpoch, retrievalUrl })
      r.published++
    }
    for (const f of stored.failures) await o.fail(await rows.row(f.providerId), { code: 'PROVIDER_REFUSED', detail: f.reason }, r)
    // A provider the SDK picked and then used for neither: nothing was added there.
    const used = new Set([...stored.copies, ...stored.failures].map((x) => x.providerId))
    for (const [providerId, d] of rows.rows) if (!used.has(providerId)) await o.fail(await d, { code: 'STOPPED_BEFORE_ADD' }, r)
    const failures = stored.failures.map((f) => `${providerName(f.providerId)}: ${f.reason}`)
    if (stored.copies.length > 0) refused.delete(g.id)
    if (failures.length > 0) refused.set(g.id, failures.join('; '))
    const copies = stored.copies.map((x) => providerName(x.providerId))
    logger.info({ groupId: g.id, pieceCid: stored.pieceCid, copies, failures }, 'group stored on PDP providers')
  }

  /** Why an upload failed: cut short by a stop, stalled, or refused by the provider the SDK names (if it does). */
  async function recordFailure(g: GroupRecord, rows: ReturnType<typeof uploadRows>, err: unknown, stopped: boolean, r: TickReport) {
    const message = (err as Error).message
    const failure: CopyFailure = stopped
      ? { code: 'STOPPED_BEFORE_ADD' }
      : isNetworkError(err) && err.chainNode
        ? { code: 'CHAIN_UNREACHABLE', detail: message }
        : isNetworkError(err, 'TIMED_OUT')
          ? { code: 'UPLOAD_STALLED', detail: message }
          : { code: 'PROVIDER_REFUSED', detail: message }
    const failedProvider = isNetworkError(err) && err.provider !== undefined ? Number(err.provider) : undefined
    // The provider that failed gets a failed row too, so that it is not asked again for a while.
    if (failedProvider !== undefined) await rows.row(failedProvider)
    for (const row of rows.rows.values()) {
      const d = (await deals.get((await row).id))!
      // Stopped once its provider held the piece: an add may have been sent, which the next start looks up on chain.
      if (stopped && d.state !== 'proposing') continue
      await o.fail(d, failure, r)
    }
    const who = failedProvider !== undefined ? `${providerName(failedProvider)} ` : ''
    refused.set(g.id, `${who}${failure.detail === undefined ? failure.code : `${failure.code}: ${failure.detail}`}`)
    if (err instanceof FocFundsError) await o.funds.uploadRefused(err)
    logger.warn({ err, groupId: g.id }, 'PDP upload failed; trying again on a later pass')
  }

  return {
    async start(g, copies, exclude, head, r) {
      const path = await content.carFile(g.id)
      if (!path) return undefined
      const pieceCid = uploadPieceCid(g)
      const size = Math.max(g.carSize!, MIN_UPLOAD_BYTES)
      const root = await content.carRoot(g.id)
      const state: PdpUpload = { copies, bytes: 0, total: size, adding: 0 }
      const controller = new AbortController()
      const rows = uploadRows(o, g, pieceCid, head)
      const stalled = new AbortController()
      let idle: NodeJS.Timeout | undefined
      const touch = () => {
        clearTimeout(idle)
        idle = setTimeout(() => stalled.abort(timedOut(`no progress in ${o.uploadIdleMs / 1000} s`)), o.uploadIdleMs)
      }
      touch()
      const done = (async () => {
        try {
          const stored = await client.store(await carSource(path, g.carSize!), {
            copies,
            excludeProviderIds: exclude,
            metadata: DATA_SET_METADATA,
            ...(root ? { pieceMetadata: { ipfsRootCID: root } } : {}),
            pieceCid,
            signal: AbortSignal.any([controller.signal, stalled.signal]),
            onProgress: (e) => {
              touch()
              rows.on(e, state)
            },
          })
          await rows.settled()
          await recordStored(g, rows, stored, r)
        } catch (err) {
          await rows.settled()
          await recordFailure(g, rows, err, controller.signal.aborted, r)
        } finally {
          clearTimeout(idle)
        }
      })()
      const upload: Upload = { upload: state, controller, done: done.finally(() => running.delete(g.id)) }
      running.set(g.id, upload)
      return { done: upload.done }
    },
    of: (groupId) => running.get(groupId)?.upload,
    count: () => running.size,
    pendingBytes: () => [...running.values()].reduce((sum, u) => sum + u.upload.total, 0),
    refused: (groupId) => refused.get(groupId),
    async stop() {
      for (const { controller } of running.values()) controller.abort(new Error('deal engine stopping'))
      // An aborted upload ends at once: its rows fail as stopped, but those whose provider holds the piece wait to be looked up on chain.
      await Promise.all([...running.values()].map((u) => u.done))
    },
  }
}
