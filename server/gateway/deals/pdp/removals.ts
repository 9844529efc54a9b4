import type { CopyFailureCode } from '../../../shared/contracts/copy-failure.ts'
import type { GroupDeal } from '../types.ts'
import { providerIdOf, type PdpContext } from './context.ts'

/** Why a copy stopped counting that says its provider is gone: it is not asked to remove anything, the payer ends the payments. */
const PROVIDER_GONE: ReadonlySet<CopyFailureCode> = new Set(['MISSED_PROOFS', 'DATA_SET_TERMINATED'])

/**
 * A copy that no longer counts is no longer paid for. Its provider is asked
 * to remove its piece from the data set, unless the chain shows it gone or
 * already scheduled (PDPVerifier refuses to schedule a piece twice). When
 * the provider is gone (it stopped proving, its data set is ended, or it
 * does not answer the removal) and no other copy of ours is in that data
 * set, the payer ends the data set's payments itself (FWSS terminateService):
 * only the provider can remove a piece. A failure is tried again later,
 * with back-off up to a day of chain time.
 */
export async function removeCopy(p: PdpContext, copy: GroupDeal): Promise<void> {
  // The row as stored: the caller may hold it from before it ended, without the reason.
  const d = (await p.deals.get(copy.id)) ?? copy
  const piece = { providerId: providerIdOf(d.provider), dataSetId: BigInt(d.dataSetId!), pieceId: BigInt(d.pieceId!) }
  const fields = { groupId: d.groupId, provider: d.provider, dataSetId: d.dataSetId, pieceId: d.pieceId }
  try {
    const state = await p.client.removalState(piece)
    if (state === 'live') await stopPaying(p, d, piece, fields)
    // A deleted data set: FWSS 1.3.1 settles its rails as the verifier deletes it; one whose rails it left is ended here.
    else if (state === 'gone' && d.failure?.code === 'DATA_SET_TERMINATED') await terminate(p, piece.dataSetId, fields)
    p.removals.forget(d.id)
  } catch (err) {
    // Said once; later tries only when they succeed.
    if (p.removals.failed(d.id) === 1)
      p.logger.warn({ err, ...fields }, 'removing a PDP copy that no longer counts failed; trying again later (it is paid for until then)')
  }
}

type Piece = { providerId: number; dataSetId: bigint; pieceId: bigint }
type Fields = Record<string, unknown>

/** The piece's removal through its provider, or, when the provider is gone and the piece is our last in the data set, the data set's end. */
async function stopPaying(p: PdpContext, d: GroupDeal, piece: Piece, fields: Fields): Promise<void> {
  const alone = !(await sharesDataSet(p, d))
  if (alone && PROVIDER_GONE.has(d.failure?.code ?? 'UNKNOWN')) {
    await terminate(p, piece.dataSetId, fields)
    return
  }
  try {
    const hash = await p.client.removeCopy(piece)
    p.logger.info({ ...fields, hash }, 'PDP copy removed from its data set: no longer paid for')
  } catch (err) {
    if (!alone) throw err
    p.logger.warn({ err, ...fields }, 'the PDP provider did not remove a copy that no longer counts; the payer ends its data set instead')
    await terminate(p, piece.dataSetId, fields)
  }
}

/** Ends the data set's payments as the payer; said when it did. */
async function terminate(p: PdpContext, dataSetId: bigint, fields: Fields): Promise<void> {
  const hash = await p.client.terminateDataSet(dataSetId)
  if (hash)
    p.logger.info({ ...fields, hash }, "PDP data set ended by the payer (its provider is gone): its payments stop at the rail's end epoch")
}

/**
 * Whether another copy of ours lives (or may be on its way) in `d`'s data
 * set: one recorded there, or one on the same provider whose data set is
 * not known yet (its add may be going to this one).
 */
async function sharesDataSet(p: PdpContext, d: GroupDeal): Promise<boolean> {
  for (const state of ['proposing', 'proposed', 'published', 'active'] as const) {
    for (const other of await p.deals.inState(state, 'pdp')) {
      if (other.id === d.id || other.provider !== d.provider) continue
      if (other.dataSetId === undefined || other.dataSetId === d.dataSetId) return true
    }
  }
  return false
}

/** Removals to try now: failed ones whose wait is over, and, once after a start, every copy that ended with its piece on chain. */
export async function retryRemovals(p: PdpContext): Promise<void> {
  if (!p.resumed.removals) {
    p.resumed.removals = true
    for (const d of [...(await p.deals.inState('ended', 'pdp')), ...(await p.deals.inState('failed', 'pdp'))]) {
      if (d.pieceId !== undefined && !p.removals.has(d.id)) p.removals.schedule(d.id)
    }
  }
  for (const id of p.removals.keys()) {
    if (!p.removals.due(id)) continue
    const d = await p.deals.get(id)
    if (d?.dataSetId === undefined || d.pieceId === undefined) p.removals.forget(id)
    else await removeCopy(p, d)
  }
}
