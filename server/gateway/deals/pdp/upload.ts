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

/**
 * The rows of one upload: one per provider the SDK names, made when it first
 * names it, and moved on as the SDK reports each step. The SDK's callbacks
 * cannot wait: what they record is awaited (`settled`) before the result is.
 */
function uploadRows(p: PdpContext, g: GroupRecord, pieceCid: string, head: number) {
  const rows = new Map<number, Promise<GroupDeal>>()
  const recorded: Promise<unknown>[] = []
  /** Providers whose add transaction is recorded: on a stop, those rows wait to be adopted. */
  const sent = new Set<number>()
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
    sent,
    row,
    settled: () => Promise.all(recorded),
    /** What one SDK event changes: the upload's progress, and the provider's row. */
    on(e: FocStoreEvent, state: PdpUpload) {
      if (e.kind === 'uploaded') state.bytes = e.bytes
      else if (e.kind === 'stored') record(() => row(e.providerId))
      else if (e.kind === 'adding') {
        state.adding++
        record(async () => {
          await p.deals.markProposed((await row(e.providerId)).id, { addTxHash: e.txHash })
          sent.add(e.providerId)
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
    ? { code: 'INTERRUPTED' }
    : isNetworkError(err) && err.chainNode
      ? { code: 'CHAIN_UNREACHABLE', detail: message }
      : isNetworkError(err, 'TIMED_OUT')
        ? { code: 'UPLOAD_STALLED', detail: message }
        : { code: 'PROVIDER_REFUSED', detail: message }
  const failedProvider = isNetworkError(err) && err.provider !== undefined ? Number(err.provider) : undefined
  // The provider that failed gets a failed row too, so that it is not asked again for a while.
  if (failedProvider !== undefined) await rows.row(failedProvider)
  for (const [providerId, d] of rows.rows) {
    // Stopped while its add was on the way: the next start adopts it from the chain.
    if (stopped && rows.sent.has(providerId)) continue
    await p.fail(await d, failure, r)
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
  const size = Math.max(g.carSize!, MIN_UPLOAD_BYTES)
  const pieceCid = pieceCidV2(g.pieceCid!, size)
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
