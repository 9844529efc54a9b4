import type { FocCopyProof } from '../../../network/foc/client.ts'
import type { GroupDeal, TickReport } from '../types.ts'
import type { PdpContext } from './context.ts'
import { readRunway } from './funding.ts'
import { removeCopy } from './removals.ts'

/** Closed proving periods in a row without a proof after which a copy no longer counts: the provider stopped proving. */
const MISSED_PERIODS_LIMIT = 2
/** Proving periods a piece may wait on chain for its first proof before the copy counts as failed. */
const FIRST_PROOF_PERIODS = 3

/** PDP copies in a data set on chain (or being added to one), proved or not yet. */
export async function copiesOnChain(p: PdpContext): Promise<GroupDeal[]> {
  return [...(await p.deals.inState('published', 'pdp')), ...(await p.deals.inState('active', 'pdp'))]
}

/**
 * Follows each copy on chain, every poll interval of chain time: added,
 * proved, proving missed, removed; and how long the account pays for them
 * (each copy's end epoch is its funds' runway).
 */
export async function followCopies(p: PdpContext, r: TickReport): Promise<void> {
  const copies = (await copiesOnChain(p)).filter((d) => d.pieceId !== undefined)
  const ids = new Set(copies.map((d) => d.id))
  p.polls.keepOnly(new Set([...ids, 'account' as const]))
  for (const id of p.missingSince.keys()) if (!ids.has(id)) p.missingSince.delete(id)
  const due = copies.filter((d) => p.polls.due(d.id))
  if (due.length === 0 && !p.polls.due('account')) return
  const account = await p.client.account()
  p.polls.done('account')
  const head = Number(account.epoch)
  p.head = { epoch: head, atMs: p.now() }
  const endEpoch = await readRunway(p, account)
  for (const d of due) {
    p.polls.done(d.id)
    const proof = await p.client
      .copyProof({ dataSetId: BigInt(d.dataSetId!), pieceId: BigInt(d.pieceId!), addedEpoch: d.addedEpoch! })
      .catch((err) => {
        p.logger.warn({ err, groupId: d.groupId, provider: d.provider }, 'reading a PDP copy on chain failed; asking again later')
        return undefined
      })
    if (proof) await followCopy(p, d, proof, head, endEpoch, r)
  }
}

/** Records what the chain says of one copy; moves it on, or out. */
async function followCopy(p: PdpContext, d: GroupDeal, proof: FocCopyProof, head: number, endEpoch: number, r: TickReport): Promise<void> {
  if (!proof.dataSetLive || !proof.pieceLive) {
    const code = proof.dataSetLive ? 'PIECE_REMOVED' : 'DATA_SET_TERMINATED'
    if (d.state === 'active') await p.deals.markEnded(d.id, { code })
    else await p.fail(d, { code }, r)
    // A data set ended by its provider: its payments are ended too, unless the verifier's deletion did.
    if (code === 'DATA_SET_TERMINATED') await removeCopy(p, d)
    return
  }
  const firstProofDueEpoch = d.state === 'published' && !proof.proved ? (proof.firstProofDueEpoch ?? undefined) : undefined
  await p.deals.recordProof(d.id, { lastProofEpoch: proof.proved ? proof.lastProvenEpoch : undefined, endEpoch, firstProofDueEpoch })
  if (d.state === 'published') {
    if (proof.proved) {
      if (await p.deals.markActive(d.id)) r.activated++
    } else if (head > d.addedEpoch! + FIRST_PROOF_PERIODS * proof.maxProvingPeriod + proof.challengeWindow) {
      await p.fail(d, { code: 'NEVER_PROVED', detail: `no proof in ${FIRST_PROOF_PERIODS} proving periods since the piece was added` }, r)
      await removeCopy(p, d)
    }
  } else await followProving(p, d, proof, head)
}

/**
 * A proved copy's later proofs: one seen missing gets one more proving period
 * to prove again (this gateway, or the provider, may just be back from a
 * stop) before it stops counting and its piece is removed.
 */
async function followProving(p: PdpContext, d: GroupDeal, proof: FocCopyProof, head: number): Promise<void> {
  const fields = { groupId: d.groupId, provider: d.provider, missedPeriods: proof.missedPeriods }
  if (proof.missedPeriods < MISSED_PERIODS_LIMIT) p.missingSince.delete(d.id)
  else if (!p.missingSince.has(d.id)) {
    p.missingSince.set(d.id, head)
    p.logger.warn(fields, 'PDP provider missed its proofs; the copy stops counting if it misses the next period too')
  } else if (head - p.missingSince.get(d.id)! >= proof.maxProvingPeriod) {
    p.missingSince.delete(d.id)
    await p.deals.markEnded(d.id, { code: 'MISSED_PROOFS', detail: `${proof.missedPeriods} proving periods in a row without a proof` })
    p.logger.warn(fields, 'PDP provider stopped proving; another copy will be made')
    await removeCopy(p, d)
  }
}
