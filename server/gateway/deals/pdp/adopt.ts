import type { TickReport } from '../types.ts'
import { epochsSince, providerIdOf, type PdpContext } from './context.ts'

/** How long an add transaction sent before a restart may stay out of a block before its copy is made again (an hour). */
const ADOPT_WAIT_EPOCHS = 120

/**
 * Copies whose add transaction was sent when a previous process stopped,
 * looked up on chain: kept if the transaction went through and the piece
 * is in our data set on that provider (found among its pieces, whatever
 * events the verifier emits), failed (and made again) if not, or once the
 * transaction stayed out of a block for
 * ADOPT_WAIT_EPOCHS. Found once, at the first pass after a start.
 */
export async function adoptInterrupted(p: PdpContext, r: TickReport): Promise<void> {
  if (!p.resumed.orphans) {
    for (const d of [...(await p.deals.inState('proposed', 'pdp')), ...(await p.deals.inState('published', 'pdp'))]) {
      if (d.pieceId === undefined) p.orphans.add(d.id)
    }
    p.resumed.orphans = true
  }
  for (const id of p.orphans) await adopt(p, id, r)
}

async function adopt(p: PdpContext, id: number, r: TickReport): Promise<void> {
  const d = await p.deals.get(id)
  if (!d || (d.state !== 'proposed' && d.state !== 'published')) {
    p.orphans.delete(id)
    return
  }
  const txHash = d.addTxHash?.startsWith('0x') ? (d.addTxHash as `0x${string}`) : undefined
  const outcome = txHash
    ? await p.client.addedCopy({ txHash, providerId: providerIdOf(d.provider), pieceCid: d.pieceCid }).catch((err: unknown) => {
        p.logger.warn({ err, groupId: d.groupId, provider: d.provider }, 'looking up an interrupted PDP add failed; asking again later')
        return { status: 'pending' as const }
      })
    : { status: 'failed' as const }
  if (outcome.status === 'pending' && epochsSince(p, d) < ADOPT_WAIT_EPOCHS) return
  p.orphans.delete(id)
  if (outcome.status !== 'added') {
    await p.fail(d, { code: 'INTERRUPTED' }, r)
    return
  }
  const { copy } = outcome
  const dataSetId = Number(copy.dataSetId)
  const pieceId = Number(copy.pieceId)
  if (d.state === 'proposed') await p.deals.markPublished(d.id, { dataSetId })
  await p.deals.recordPdpCopy(d.id, { dataSetId, pieceId, addedEpoch: copy.addedEpoch, retrievalUrl: copy.retrievalUrl })
  r.published++
  p.logger.info(
    { groupId: d.groupId, provider: d.provider, dataSetId, pieceId },
    'PDP copy adopted after a restart: its add went through on chain',
  )
}
