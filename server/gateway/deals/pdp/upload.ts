import { createReadStream } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { Readable } from 'node:stream'
import { isNetworkError, timedOut } from '../../../network/errors.ts'
import { FocFundsError, type FocStored, type FocStoreEvent } from '../../../network/foc/client.ts'
import type { CopyFailure } from '../../../shared/contracts/copy-failure.ts'
import { pieceCidV2 } from '../../../shared/piece.ts'
import type { GroupRecord } from '../../content/index.ts'
import type { GroupDeal, TickReport } from '../types.ts'
import { providerName, type PdpContext } from './context.ts'
import type { PdpUpload } from './types.ts'

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
function uploadRows(p: PdpContext, g: GroupRecord, pieceCid: string, head: number) {
  const rows = new Map<number, Promise<GroupDeal>>()
  const recorded: Promise<unknown>[] = []
  const row = (providerId: number) =>
    rows.get(providerId) ??
    rows
      .set(
        providerId,
        p.deals.create({
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
    recorded.push(work().catch((err) => p.logger.warn({ err, groupId: g.id }, 'recording a PDP upload step failed')))
  return {
    rows,
    row,
    settled: () => Promise.all(recorded),
    /** What one SDK event changes: the upload's progress, and the provider's row. */
    on(e: FocStoreEvent, state: PdpUpload) {
      if (e.kind === 'uploaded') state.bytes = e.bytes
      else if (e.kind === 'stored' || e.kind === 'pulled') record(async () => p.deals.markProposed((await row(e.providerId)).id, {}))
      else if (e.kind === 'adding') {
        state.adding++
        record(async () => {
          const d = await row(e.providerId)
          await p.deals.markProposed(d.id, {})
          await p.deals.recordAddTx(d.id, e.txHash)
        })
      } else if (e.kind === 'added')
        record(async () => p.deals.markPublished((await row(e.providerId)).id, { dataSetId: Number(e.dataSetId) }))
    },
  }
}

/** What the SDK stored: each copy recorded on chain; each provider that failed fails its row (not asked again for a while). */
async function recordStored(p: PdpContext, g: GroupRecord, rows: ReturnType<typeof uploadRows>, stored: FocStored, r: TickReport) {
  for (const copy of stored.copies) {
    const d = await rows.row(copy.providerId)
    await p.deals.markProposed(d.id, {})
    await p.deals.markPublished(d.id, { dataSetId: Number(copy.dataSetId) })
    const { dataSetId, pieceId, addedEpoch, retrievalUrl } = copy
    await p.deals.recordPdpCopy(d.id, { dataSetId: Number(dataSetId), pieceId: Number(pieceId), addedEpoch, retrievalUrl })
    r.published++
  }
  for (const f of stored.failures) await p.fail(await rows.row(f.providerId), { code: 'PROVIDER_REFUSED', detail: f.reason }, r)
  // A provider the SDK picked and then used for neither: nothing was added there.
  const used = new Set([...stored.copies, ...stored.failures].map((x) => x.providerId))
  for (const [providerId, d] of rows.rows) if (!used.has(providerId)) await p.fail(await d, { code: 'STOPPED_BEFORE_ADD' }, r)
  const failures = stored.failures.map((f) => `${providerName(f.providerId)}: ${f.reason}`)
  if (stored.copies.length > 0) p.refused.delete(g.id)
  if (failures.length > 0) p.refused.set(g.id, failures.join('; '))
  const copies = stored.copies.map((x) => providerName(x.providerId))
  p.logger.info({ groupId: g.id, pieceCid: stored.pieceCid, copies, failures }, 'group stored on PDP providers')
}

/** Why an upload failed: cut short by a stop, stalled, or refused by the provider the SDK names (if it does). */
async function recordFailure(
  p: PdpContext,
  g: GroupRecord,
  rows: ReturnType<typeof uploadRows>,
  err: unknown,
  stopped: boolean,
  r: TickReport,
) {
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
    const d = (await p.deals.get((await row).id))!
    // Stopped once its provider held the piece: an add may have been sent, which the next start looks up on chain.
    if (stopped && d.state !== 'proposing') continue
    await p.fail(d, failure, r)
  }
  const who = failedProvider !== undefined ? `${providerName(failedProvider)} ` : ''
  p.refused.set(g.id, `${who}${failure.detail === undefined ? failure.code : `${failure.code}: ${failure.detail}`}`)
  if (err instanceof FocFundsError) p.funds.set({ code: 'WALLET_SHORT', words: `no funds: deposit USDFC: ${err.message}` })
  p.logger.warn({ err, groupId: g.id }, 'PDP upload failed; trying again on a later pass')
}

/**
 * Starts the group's upload through the SDK to `copies` providers (none of
 * `exclude`), in the background: the SDK picks them (endorsed ones first),
 * uploads to one and the others pull from it, and adds the piece to our data
 * set on each. An upload with no progress for `uploadIdleMs` (no bytes taken,
 * no step on chain) has stalled and is cut short.
 */
export async function upload(p: PdpContext, g: GroupRecord, copies: number, exclude: number[], head: number, r: TickReport): Promise<void> {
  const path = await p.content.carFile(g.id)
  if (!path) return
  const pieceCid = uploadPieceCid(g)
  const size = Math.max(g.carSize!, MIN_UPLOAD_BYTES)
  const root = await p.content.carRoot(g.id)
  const state: PdpUpload = { copies, bytes: 0, total: size, adding: 0 }
  const controller = new AbortController()
  const rows = uploadRows(p, g, pieceCid, head)
  const stalled = new AbortController()
  let idle: NodeJS.Timeout | undefined
  const touch = () => {
    clearTimeout(idle)
    idle = setTimeout(() => stalled.abort(timedOut(`no progress in ${p.options.uploadIdleMs / 1000} s`)), p.options.uploadIdleMs)
  }
  touch()
  const done = (async () => {
    try {
      const stored = await p.client.store(await carSource(path, g.carSize!), {
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
      await recordStored(p, g, rows, stored, r)
    } catch (err) {
      await rows.settled()
      await recordFailure(p, g, rows, err, controller.signal.aborted, r)
    } finally {
      clearTimeout(idle)
    }
  })()
  p.uploads.set(g.id, { upload: state, controller, done: done.finally(() => p.uploads.delete(g.id)) })
}
