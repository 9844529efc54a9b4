import type { FocClient, FocCopy } from '../../../network/foc/client.ts'
import { countingCopies } from '../copies.ts'
import type { GroupDeal, RouteContext, TickReport } from '../types.ts'
import { providerIdOf, providerName } from './provider-name.ts'
import type { Removals } from './removals.ts'
import type { ChainPace, PdpRouteOptions } from './types.ts'

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

/** Copies made across a stop, found on chain and made to agree with the deal store. */
export interface Adoption {
  /**
   * Groups whose copies were being added when a previous process stopped,
   * found once at the first pass after a start and settled from the chain
   * (`settle`) at each pass until none of their copies waits, and
   * for ADOPT_WAIT_EPOCHS after one was given up: an add that lands that late,
   * beside the copy made again, is found and removed.
   */
  resume(r: TickReport): Promise<void>
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
  settle(groupId: number, pieceCid: string, r: TickReport): Promise<void>
}

export interface AdoptionOptions
  extends Pick<RouteContext, 'deals' | 'logger' | 'now' | 'fail'>, Pick<PdpRouteOptions, 'copies'>, ChainPace {
  client: Pick<FocClient, 'pieceCopies' | 'addedCopy'>
  removals: Pick<Removals, 'remove'>
  /** Whether the group's upload is under way: its rows are its own until it settles. */
  uploading(groupId: number): boolean
}

export function createAdoption(o: AdoptionOptions): Adoption {
  const { deals, logger, client } = o
  /** Groups with copies whose add may have been sent before a restart: looked up on chain until each is adopted or failed. */
  const orphans = new Set<number>()
  let resumed = false

  /** Chain time since a row last changed, in this chain's epochs. */
  const epochsSince = (d: GroupDeal) => (o.now() - d.updatedMs) / 1000 / o.epochSeconds
  /** A copy given up after its provider held the piece: an add sent then could still land, if late. */
  const givenUp = (d: GroupDeal) => d.state === 'failed' && d.failure?.code === 'STOPPED_BEFORE_ADD' && epochsSince(d) < ADOPT_WAIT_EPOCHS

  async function settle(groupId: number, pieceCid: string, r: TickReport): Promise<void> {
    const rows = await deals.ofGroup(groupId, 'pdp')
    const known = new Set(rows.filter((d) => d.pieceId !== undefined).map((d) => `${d.dataSetId}/${d.pieceId}`))
    const untracked = (await client.pieceCopies({ pieceCid })).filter((c) => !known.has(`${c.dataSetId}/${c.pieceId}`))
    for (const d of rows.filter(unresolved)) {
      const at = untracked.findIndex((c) => providerName(c.providerId) === d.provider)
      if (at >= 0) {
        await adopt(d, untracked.splice(at, 1)[0], r)
        logger.info({ groupId, provider: d.provider }, 'PDP copy adopted after a restart: its add went through on chain')
      } else if (!(await mayStillLand(d))) {
        await o.fail(d, d.addTxHash ? { code: 'INTERRUPTED' } : { code: 'STOPPED_BEFORE_ADD' }, r)
        // Looked up again for a while: a late add would sit beside the copy made again.
        if (d.state !== 'proposing') orphans.add(groupId)
      }
    }
    for (const copy of untracked) await untrackedCopy(groupId, pieceCid, copy, r)
  }

  /** Whether an add for a copy not found on chain may still land: its transaction known and not in a block yet, or its provider holding the piece lately. */
  async function mayStillLand(d: GroupDeal): Promise<boolean> {
    if (d.state === 'proposing') return false
    if (!d.addTxHash?.startsWith('0x')) return epochsSince(d) < INTENT_WAIT_EPOCHS
    const outcome = await client.addedCopy({
      txHash: d.addTxHash as `0x${string}`,
      providerId: providerIdOf(d.provider),
      pieceCid: d.pieceCid,
    })
    // Added: it landed between the two reads, and is found at the next pass.
    return outcome.status === 'added' || (outcome.status === 'pending' && epochsSince(d) < ADOPT_WAIT_EPOCHS)
  }

  /** Records `copy` as the copy `d` set out to make. */
  async function adopt(d: GroupDeal, copy: FocCopy, r?: TickReport): Promise<void> {
    const dataSetId = Number(copy.dataSetId)
    if (d.state === 'proposing') await deals.markProposed(d.id, {})
    if (d.state !== 'published') await deals.markPublished(d.id, { dataSetId })
    await deals.recordPdpCopy(d.id, {
      dataSetId,
      pieceId: Number(copy.pieceId),
      addedEpoch: copy.addedEpoch,
      retrievalUrl: copy.retrievalUrl,
    })
    if (r) r.published++
  }

  /** A live piece no row records: a copy of the group while it has fewer than it keeps and none on that provider, else removed. */
  async function untrackedCopy(groupId: number, pieceCid: string, copy: FocCopy, r: TickReport): Promise<void> {
    const provider = providerName(copy.providerId)
    const live = await deals.liveOfGroup(groupId, 'pdp')
    const keep =
      countingCopies({ name: 'pdp', lasting: () => true }, live, 0).length < o.copies && !live.some((x) => x.provider === provider)
    const epoch = copy.addedEpoch
    const d = await deals.create({ groupId, route: 'pdp', provider, pieceCid, startEpoch: epoch, endEpoch: epoch, proposalEpoch: epoch })
    await adopt(d, copy, keep ? r : undefined)
    const fields = { groupId, provider, dataSetId: Number(copy.dataSetId), pieceId: Number(copy.pieceId) }
    if (keep) {
      logger.info(fields, 'PDP copy found on chain that no row recorded (an add that went through across a restart): adopted')
      return
    }
    await deals.markFailed(d.id, { code: 'EXTRA_COPY' })
    logger.warn(fields, 'PDP piece found on chain beyond the copies kept (an add that went through across a restart): removing it')
    await o.removals.remove(d)
  }

  return {
    async resume(r) {
      if (!resumed) {
        for (const state of ['proposing', 'proposed', 'published', 'failed'] as const) {
          for (const d of await deals.inState(state, 'pdp')) if (unresolved(d) || givenUp(d)) orphans.add(d.groupId)
        }
        resumed = true
      }
      for (const groupId of orphans) {
        if (o.uploading(groupId)) continue
        const rows = await deals.ofGroup(groupId, 'pdp')
        if (!rows.some((d) => unresolved(d) || givenUp(d))) {
          orphans.delete(groupId)
          continue
        }
        await settle(groupId, rows[0].pieceCid, r).catch((err: unknown) => {
          logger.warn({ err, groupId }, 'looking up an interrupted PDP add on chain failed; asking again later')
        })
      }
    },
    settle,
  }
}
