import type { FocCopy } from '../../../network/foc/client.ts'
import { countingCopies } from '../copies.ts'
import type { GroupDeal, TickReport } from '../types.ts'
import { epochsSince, providerIdOf, providerName, type PdpContext } from './context.ts'
import { removeCopy } from './removals.ts'

/** How long an add transaction the provider answered with may stay out of a block before its copy is made again (an hour). */
const ADOPT_WAIT_EPOCHS = 120
/**
 * How long a copy whose provider held the piece when the gateway stopped
 * (its add about to be sent, or sent with the answer lost) may stay off
 * chain before it is made again: an add the provider sent lands within a
 * few epochs (ten minutes at 30 s).
 */
const INTENT_WAIT_EPOCHS = 20

/** A copy whose add may have been sent by a process that stopped: on its way (`proposing`, `proposed`) or confirmed, with no piece recorded. */
const unresolved = (d: GroupDeal) =>
  (d.state === 'proposing' || d.state === 'proposed' || d.state === 'published') && d.pieceId === undefined

/** A copy given up after its provider held the piece: an add sent then could still land, if late. */
const givenUp = (p: PdpContext, d: GroupDeal) =>
  d.state === 'failed' && d.failure?.code === 'STOPPED_BEFORE_ADD' && epochsSince(p, d) < ADOPT_WAIT_EPOCHS

/**
 * Groups whose copies were being added when a previous process stopped,
 * found once at the first pass after a start and settled from the chain
 * (`settleFromChain`) at each pass until none of their copies waits, and
 * for ADOPT_WAIT_EPOCHS after one was given up: an add that lands that late,
 * beside the copy made again, is found and removed.
 */
export async function adoptInterrupted(p: PdpContext, r: TickReport): Promise<void> {
  if (!p.resumed.orphans) {
    for (const state of ['proposing', 'proposed', 'published', 'failed'] as const) {
      for (const d of await p.deals.inState(state, 'pdp')) if (unresolved(d) || givenUp(p, d)) p.orphans.add(d.groupId)
    }
    p.resumed.orphans = true
  }
  for (const groupId of p.orphans) {
    if (p.uploads.has(groupId)) continue
    const rows = await p.deals.ofGroup(groupId, 'pdp')
    if (!rows.some((d) => unresolved(d) || givenUp(p, d))) {
      p.orphans.delete(groupId)
      continue
    }
    await settleFromChain(p, groupId, rows[0].pieceCid, r).catch((err: unknown) => {
      p.logger.warn({ err, groupId }, 'looking up an interrupted PDP add on chain failed; asking again later')
    })
  }
}

/**
 * What the chain holds of the group's piece (`pieceCid`, v2), made to agree
 * with what the gateway counts; at a start, for copies a stopped process was
 * adding, and before the group is uploaded again. Every live piece of ours
 * with that CID (PDPVerifier findPieceIdsByCid, on any provider) that no row
 * records is taken by the copy on its way to that provider, else adopted as
 * a new copy while the group has fewer than it keeps, else (a second piece
 * on one provider, or one copy too many) recorded and removed as EXTRA_COPY,
 * so that it is not paid for. A copy on its way that the chain does not show
 * fails, nothing held against its provider, once no add can still land:
 * at once when its provider never held the piece, after INTENT_WAIT_EPOCHS
 * when it did, after ADOPT_WAIT_EPOCHS when its add transaction is known and
 * not in a block yet.
 */
export async function settleFromChain(p: PdpContext, groupId: number, pieceCid: string, r: TickReport): Promise<void> {
  const rows = await p.deals.ofGroup(groupId, 'pdp')
  const known = new Set(rows.filter((d) => d.pieceId !== undefined).map((d) => `${d.dataSetId}/${d.pieceId}`))
  const untracked = (await p.client.pieceCopies({ pieceCid })).filter((c) => !known.has(`${c.dataSetId}/${c.pieceId}`))
  for (const d of rows.filter(unresolved)) {
    const at = untracked.findIndex((c) => providerName(c.providerId) === d.provider)
    if (at >= 0) {
      await adopt(p, d, untracked.splice(at, 1)[0], r)
      p.logger.info({ groupId, provider: d.provider }, 'PDP copy adopted after a restart: its add went through on chain')
    } else if (!(await mayStillLand(p, d))) {
      await p.fail(d, d.addTxHash ? { code: 'INTERRUPTED' } : { code: 'STOPPED_BEFORE_ADD' }, r)
      // Looked up again for a while: a late add would sit beside the copy made again.
      if (d.state !== 'proposing') p.orphans.add(groupId)
    }
  }
  for (const copy of untracked) await untrackedCopy(p, groupId, pieceCid, copy, r)
}

/** Whether an add for a copy not found on chain may still land: its transaction known and not in a block yet, or its provider holding the piece lately. */
async function mayStillLand(p: PdpContext, d: GroupDeal): Promise<boolean> {
  if (d.state === 'proposing') return false
  if (!d.addTxHash?.startsWith('0x')) return epochsSince(p, d) < INTENT_WAIT_EPOCHS
  const outcome = await p.client.addedCopy({
    txHash: d.addTxHash as `0x${string}`,
    providerId: providerIdOf(d.provider),
    pieceCid: d.pieceCid,
  })
  // Added: it landed between the two reads, and is found at the next pass.
  return outcome.status === 'added' || (outcome.status === 'pending' && epochsSince(p, d) < ADOPT_WAIT_EPOCHS)
}

/** Records `copy` as the copy `d` set out to make. */
async function adopt(p: PdpContext, d: GroupDeal, copy: FocCopy, r?: TickReport): Promise<void> {
  const dataSetId = Number(copy.dataSetId)
  if (d.state === 'proposing') await p.deals.markProposed(d.id, {})
  if (d.state !== 'published') await p.deals.markPublished(d.id, { dataSetId })
  await p.deals.recordPdpCopy(d.id, {
    dataSetId,
    pieceId: Number(copy.pieceId),
    addedEpoch: copy.addedEpoch,
    retrievalUrl: copy.retrievalUrl,
  })
  if (r) r.published++
}

/** A live piece no row records: a copy of the group while it has fewer than it keeps and none on that provider, else removed. */
async function untrackedCopy(p: PdpContext, groupId: number, pieceCid: string, copy: FocCopy, r: TickReport): Promise<void> {
  const provider = providerName(copy.providerId)
  const live = await p.deals.liveOfGroup(groupId, 'pdp')
  const keep =
    countingCopies({ name: 'pdp', lasting: () => true }, live, 0).length < p.options.copies && !live.some((x) => x.provider === provider)
  const epoch = copy.addedEpoch
  const d = await p.deals.create({ groupId, route: 'pdp', provider, pieceCid, startEpoch: epoch, endEpoch: epoch, proposalEpoch: epoch })
  await adopt(p, d, copy, keep ? r : undefined)
  const fields = { groupId, provider, dataSetId: Number(copy.dataSetId), pieceId: Number(copy.pieceId) }
  if (keep) {
    p.logger.info(fields, 'PDP copy found on chain that no row recorded (an add that went through across a restart): adopted')
    return
  }
  await p.deals.markFailed(d.id, { code: 'EXTRA_COPY' })
  p.logger.warn(fields, 'PDP piece found on chain beyond the copies kept (an add that went through across a restart): removing it')
  await removeCopy(p, d)
}
