import type { FocClient } from '../../../network/foc/client.ts'
import type { CopyFailureCode } from '../../../shared/contracts/copy-failure.ts'
import { createPacer } from '../pacer.ts'
import type { GroupDeal, RouteContext } from '../types.ts'
import { providerIdOf } from './provider-name.ts'
import type { ChainPace } from './types.ts'

/** Why a copy stopped counting that says its provider is gone: it is not asked to remove anything, the payer ends the payments. */
const PROVIDER_GONE: ReadonlySet<CopyFailureCode> = new Set(['MISSED_PROOFS', 'DATA_SET_TERMINATED'])

const PROVIDER_GONE_WHY = 'its provider is gone'
const NOTHING_LEFT_WHY = 'no piece of ours is left in it: its files were deleted'

/** The wait before the first retry of a failed removal, and the longest: 10 epochs, doubling up to a day of chain time. */
const REMOVAL_RETRY_FIRST_EPOCHS = 10
const REMOVAL_RETRY_MAX_EPOCHS = 2880

/** Copies that no longer count, taken off chain so that they are no longer paid for. */
export interface Removals {
  /**
   * A copy that no longer counts is no longer paid for. Its provider is asked
   * to remove its piece from the data set, unless the chain shows it gone or
   * already scheduled (PDPVerifier refuses to schedule a piece twice). When
   * the provider is gone (it stopped proving, its data set is ended, or it
   * does not answer the removal) and no other copy of ours is in that data
   * set, the payer ends the data set's payments itself (FWSS terminateService):
   * only the provider can remove a piece. A copy of a retired group (its
   * files deleted) whose piece was our last in its data set ends the data set
   * too, once its piece is scheduled for removal: an empty data set would go on
   * paying its monthly fee. A failure is tried again later, with back-off up
   * to a day of chain time.
   */
  remove(copy: GroupDeal): Promise<void>
  /** Removals to try now: failed ones whose wait is over, and, once after a start, every copy that ended with its piece on chain. */
  retry(): Promise<void>
}

export interface RemovalsOptions extends Pick<RouteContext, 'deals' | 'logger' | 'now'>, ChainPace {
  client: Pick<FocClient, 'removalState' | 'removeCopy' | 'terminateDataSet'>
}

type Piece = { providerId: number; dataSetId: bigint; pieceId: bigint }
type Fields = Record<string, unknown>

export function createRemovals(o: RemovalsOptions): Removals {
  const { deals, logger, client } = o
  const epochMs = o.epochSeconds * 1000
  /** Copies whose piece is to be removed, and when to try next. */
  const pending = createPacer<number>({
    now: o.now,
    everyMs: 0,
    backoff: { firstMs: REMOVAL_RETRY_FIRST_EPOCHS * epochMs, maxMs: REMOVAL_RETRY_MAX_EPOCHS * epochMs },
  })
  /** Ended copies' pieces are queued once after a start. */
  let resumed = false

  async function remove(copy: GroupDeal): Promise<void> {
    // The row as stored: the caller may hold it from before it ended, without the reason.
    const d = (await deals.get(copy.id)) ?? copy
    const piece = { providerId: providerIdOf(d.provider), dataSetId: BigInt(d.dataSetId!), pieceId: BigInt(d.pieceId!) }
    const fields = { groupId: d.groupId, provider: d.provider, dataSetId: d.dataSetId, pieceId: d.pieceId }
    try {
      const state = await client.removalState(piece)
      if (state === 'live') await stopPaying(d, piece, fields)
      // A deleted data set: FWSS 1.3.1 settles its rails as the verifier deletes it; one whose rails it left is ended here.
      else if (state === 'gone' && d.failure?.code === 'DATA_SET_TERMINATED') await terminate(piece.dataSetId, fields, PROVIDER_GONE_WHY)
      // Also when a stop came between the piece's removal and this (terminate is a no-op on an ended data set).
      if (d.failure?.code === 'RETIRED' && !(await sharesDataSet(d))) await terminate(piece.dataSetId, fields, NOTHING_LEFT_WHY)
      pending.forget(d.id)
    } catch (err) {
      // Said once; later tries only when they succeed.
      if (pending.failed(d.id) === 1)
        logger.warn({ err, ...fields }, 'removing a PDP copy that no longer counts failed; trying again later (it is paid for until then)')
    }
  }

  /** The piece's removal through its provider, or, when the provider is gone and the piece is our last in the data set, the data set's end. */
  async function stopPaying(d: GroupDeal, piece: Piece, fields: Fields): Promise<void> {
    const alone = !(await sharesDataSet(d))
    if (alone && PROVIDER_GONE.has(d.failure?.code ?? 'UNKNOWN')) {
      await terminate(piece.dataSetId, fields, PROVIDER_GONE_WHY)
      return
    }
    try {
      const hash = await client.removeCopy(piece)
      logger.info({ ...fields, hash }, 'PDP copy removed from its data set: no longer paid for')
    } catch (err) {
      if (!alone) throw err
      logger.warn({ err, ...fields }, 'the PDP provider did not remove a copy that no longer counts; the payer ends its data set instead')
      await terminate(piece.dataSetId, fields, PROVIDER_GONE_WHY)
    }
  }

  /** Ends the data set's payments as the payer; said, with `why`, when it did. */
  async function terminate(dataSetId: bigint, fields: Fields, why: string): Promise<void> {
    const hash = await client.terminateDataSet(dataSetId)
    if (hash) logger.info({ ...fields, hash }, `PDP data set ended by the payer (${why}): its payments stop at the rail's end epoch`)
  }

  /**
   * Whether another copy of ours lives (or may be on its way) in `d`'s data
   * set: one recorded there, or one on the same provider whose data set is
   * not known yet (its add may be going to this one).
   */
  async function sharesDataSet(d: GroupDeal): Promise<boolean> {
    for (const state of ['proposing', 'proposed', 'published', 'active'] as const) {
      for (const other of await deals.inState(state, 'pdp')) {
        if (other.id === d.id || other.provider !== d.provider) continue
        if (other.dataSetId === undefined || other.dataSetId === d.dataSetId) return true
      }
    }
    return false
  }

  return {
    remove,
    async retry() {
      if (!resumed) {
        resumed = true
        for (const d of [...(await deals.inState('ended', 'pdp')), ...(await deals.inState('failed', 'pdp'))]) {
          if (d.pieceId !== undefined && !pending.has(d.id)) pending.schedule(d.id)
        }
      }
      for (const id of pending.keys()) {
        if (!pending.due(id)) continue
        const d = await deals.get(id)
        if (d?.dataSetId === undefined || d.pieceId === undefined) pending.forget(id)
        else await remove(d)
      }
    },
  }
}
