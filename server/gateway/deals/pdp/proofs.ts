import type { FocClient, FocCopyProof } from '../../../network/foc/client.ts'
import { createPacer, inChainTime } from '../pacer.ts'
import type { DealStore, GroupDeal, RouteContext, TickReport } from '../types.ts'
import { provingVerdict, type ProvingVerdict } from './faults.ts'
import type { PdpFunds } from './funding.ts'
import type { Removals } from './removals.ts'
import type { ChainPace, PdpRouteOptions } from './types.ts'

/** Proving periods a piece may wait on chain for its first proof before the copy counts as failed. */
const FIRST_PROOF_PERIODS = 3

/** PDP copies in a data set on chain (or being added to one), proved or not yet. */
export async function copiesOnChain(deals: Pick<DealStore, 'inState'>): Promise<GroupDeal[]> {
  return [...(await deals.inState('published', 'pdp')), ...(await deals.inState('active', 'pdp'))]
}

/** The copies on chain, followed: proved, proving missed, removed. */
export interface ProofFollower {
  /**
   * Follows each copy on chain, every poll interval of chain time: added,
   * proved, proving missed, removed; and how long the account pays for them
   * (each copy's end epoch is its funds' runway).
   */
  follow(r: TickReport): Promise<void>
}

export interface ProofFollowerOptions
  extends Pick<RouteContext, 'deals' | 'logger' | 'now' | 'fail'>, Pick<PdpRouteOptions, 'pollMs'>, ChainPace {
  client: Pick<FocClient, 'account' | 'copyProof'>
  funds: Pick<PdpFunds, 'readRunway'>
  removals: Pick<Removals, 'remove'>
}

export function createProofFollower(o: ProofFollowerOptions): ProofFollower {
  const { deals, logger, client } = o
  // Chain time, like the engine's other waits: a sped-up simulated network asks as often per epoch as a real one.
  const polls = createPacer<number | 'account'>({ now: o.now, everyMs: inChainTime(o.pollMs, o.epochSeconds) })

  /** Records what the chain says of one copy; moves it on, or out. */
  async function followCopy(d: GroupDeal, proof: FocCopyProof, head: number, endEpoch: number, r: TickReport): Promise<void> {
    if (!proof.dataSetLive || !proof.pieceLive) {
      const code = proof.dataSetLive ? 'PIECE_REMOVED' : 'DATA_SET_TERMINATED'
      if (d.state === 'active') await deals.markEnded(d.id, { code })
      else await o.fail(d, { code }, r)
      // A data set ended by its provider: its payments are ended too, unless the verifier's deletion did.
      if (code === 'DATA_SET_TERMINATED') await o.removals.remove(d)
      return
    }
    const firstProofDueEpoch = d.state === 'published' && !proof.proved ? (proof.firstProofDueEpoch ?? undefined) : undefined
    const verdict = d.state === 'active' ? provingVerdict(proof, head) : undefined
    await deals.recordProof(d.id, {
      lastProofEpoch: proof.proved ? proof.lastProvenEpoch : undefined,
      endEpoch,
      firstProofDueEpoch,
      ...(verdict && verdict.kind !== 'proving' ? { missed: verdict.missed } : {}),
    })
    if (d.state === 'published') {
      if (proof.proved) {
        if (await deals.markActive(d.id)) r.activated++
      } else if (head > d.addedEpoch! + FIRST_PROOF_PERIODS * proof.maxProvingPeriod + proof.challengeWindow) {
        await o.fail(d, { code: 'NEVER_PROVED', detail: `no proof in ${FIRST_PROOF_PERIODS} proving periods since the piece was added` }, r)
        await o.removals.remove(d)
      }
    } else if (verdict) await followProving(d, verdict)
  }

  /**
   * A proved copy's later proofs: a missed one is told at once and recorded on
   * the copy (the record and the tab show it); the copy keeps counting while
   * its provider may prove again (provingVerdict's grace), then stops counting
   * and its piece is removed; a proof in time clears the miss.
   */
  async function followProving(d: GroupDeal, verdict: ProvingVerdict): Promise<void> {
    const fields = { groupId: d.groupId, provider: d.provider }
    if (verdict.kind === 'proving') {
      if (d.missedProofEpoch !== undefined) logger.info(fields, 'PDP provider proves again: its copy counts as before')
    } else if (verdict.kind === 'missing') {
      // Said once per miss: the row keeps it across passes and restarts.
      if (d.missedProofEpoch !== verdict.missed.missedProofEpoch)
        logger.warn(
          { ...fields, ...verdict.missed },
          `PDP provider missed its proof due by epoch ${verdict.missed.missedProofEpoch}; the copy stops counting after epoch ${verdict.missed.stopsCountingEpoch} unless it proves again`,
        )
    } else {
      await deals.markEnded(d.id, { code: 'MISSED_PROOFS', detail: `${verdict.periods} proving periods in a row without a proof` })
      logger.warn({ ...fields, ...verdict.missed }, 'PDP provider stopped proving; another copy will be made')
      await o.removals.remove(d)
    }
  }

  return {
    async follow(r) {
      const copies = (await copiesOnChain(deals)).filter((d) => d.pieceId !== undefined)
      const ids = new Set(copies.map((d) => d.id))
      polls.keepOnly(new Set([...ids, 'account' as const]))
      const due = copies.filter((d) => polls.due(d.id))
      if (due.length === 0 && !polls.due('account')) return
      const account = await client.account()
      polls.done('account')
      const head = Number(account.epoch)
      const endEpoch = await o.funds.readRunway(account)
      for (const d of due) {
        polls.done(d.id)
        const proof = await client
          .copyProof({ dataSetId: BigInt(d.dataSetId!), pieceId: BigInt(d.pieceId!), addedEpoch: d.addedEpoch! })
          .catch((err) => {
            logger.warn({ err, groupId: d.groupId, provider: d.provider }, 'reading a PDP copy on chain failed; asking again later')
            return undefined
          })
        if (proof) await followCopy(d, proof, head, endEpoch, r)
      }
    },
  }
}
