import { bytes, counted, inWallTime } from '../../words.ts'
import type { RouteProgress } from '../route.ts'
import type { GroupDeal } from '../types.ts'
import type { ChainProblem } from './chain-problems.ts'
import type { PdpUpload } from './types.ts'

/** What the PDP route knows of one group beyond its rows. */
export interface PdpFacts {
  copies: number
  epochSeconds: number
  upload?: PdpUpload
  /** The chain's head now, as far as the route knows (undefined before its first read). */
  head?: number
  /** Why the last upload stored no copy (providers refused, stalled, none to ask). */
  refused?: string
  /** The group's CAR is larger than one upload takes: no copy can be made of it. */
  oversized?: { carSize: number; maxUploadBytes: number }
  /** Set while nothing is uploaded: the account cannot pay. */
  fundsError?: string
  /** Set while the Onchain Cloud itself refuses the route (a contract's revert) or does not answer. */
  chainProblem?: ChainProblem
  /** Its last upload stored no copy: when it is sent again ("in about 4 minutes"). */
  nextTry?: string
  /** Other groups' uploads take every slot: what it waits for, in words. */
  slotTaken?: string
}

/**
 * Where a group's PDP copies stand, in words, along their milestones:
 * uploading (and how much is sent), being added on chain, committed (the
 * piece added and confirmed on chain) and waiting for the first proof, with
 * when it is due from the data set's proving schedule (a day on mainnet),
 * proved; and what stops more, said after the steps while the group is
 * not fully proved: no funds, refused (and when the next
 * upload is), or its turn to upload. With none of its copies moving, such a
 * group is held back, not under way, and its reason says what it waits for.
 * The group is offloaded once its copies are proved, so a committed copy's
 * step says the offload waits for it. A proved copy that missed its proof is
 * told apart (`missedProof`): the group needs attention, even once offloaded.
 */
export function pdpProgress(deals: readonly GroupDeal[], f: PdpFacts): RouteProgress {
  const count = (state: string) => deals.filter((d) => d.state === state).length
  const proved = count('active')
  const adding = f.upload && f.upload.adding > 0 ? f.upload.adding : count('proposed')
  const committed = deals.filter((d) => d.state === 'published')
  const steps: string[] = []
  if (proved > 0) steps.push(`${proved} of ${counted(f.copies, 'PDP copy', 'PDP copies')} proved`)
  if (f.upload && f.upload.adding === 0) {
    const percent = Math.floor((100 * f.upload.bytes) / f.upload.total)
    steps.push(`uploading to ${counted(f.upload.copies, 'provider', 'providers')} (${percent} % sent)`)
  }
  if (adding > 0) steps.push('waiting for the piece to be added on chain')
  if (committed.length > 0) steps.push(committedStep(committed, proved < f.copies, f))
  // Copies on their way (uploading, being added, committed) move by themselves; proved ones alone do not.
  const moving = f.upload !== undefined || adding > 0 || committed.length > 0
  const oversized =
    f.oversized &&
    `the group's CAR (${bytes(f.oversized.carSize)}) is larger than one Onchain Cloud upload takes (${bytes(f.oversized.maxUploadBytes)}): no PDP copy can be made of it`
  // When the next upload is goes with the block (NO_PROVIDER's `next`).
  const retry = f.refused && !f.upload ? `PDP provider refused: ${f.refused}` : f.nextTry && 'its last PDP upload stored no copy'
  const problem =
    proved < f.copies ? (f.chainProblem?.words ?? oversized ?? f.fundsError ?? retry ?? (moving ? undefined : f.slotTaken)) : undefined
  // A route that holds the group back is not under way unless copies are moving: the group's reason then names what it waits for.
  const underWay = moving || (steps.length > 0 && !problem)
  // What stops more copies is told with the other steps, whichever route's they are.
  if (problem) steps.push(problem)
  const missedProof = missedProofWords(deals, f)
  return {
    underWay,
    steps,
    ...(missedProof ? { missedProof } : {}),
    ...(!problem
      ? {}
      : problem === f.chainProblem?.words
        ? { blocked: { code: f.chainProblem.code, words: problem } }
        : problem === f.fundsError
          ? { blocked: { code: 'WAITING_FOR_FUNDS', words: problem } }
          : problem === f.slotTaken
            ? { blocked: { code: 'WAITING_FOR_UPLOAD_SLOT', words: problem } }
            : { blocked: { code: 'NO_PROVIDER', words: problem, ...(f.nextTry ? { next: f.nextTry } : {}) } }),
  }
}

/**
 * "2 PDP copies committed on chain; the offload waits for their first proof, due in about 23 hours": the last
 * of their first proofs, since the offload waits for all (the time is left out until the chain has been read).
 */
function committedStep(committed: readonly GroupDeal[], offloadWaits: boolean, f: PdpFacts): string {
  const dues = committed.flatMap((d) => (d.firstProofDueEpoch === undefined ? [] : [d.firstProofDueEpoch]))
  const when = dues.length > 0 && f.head !== undefined ? `, due ${inWallTime(Math.max(...dues) - f.head, f.epochSeconds)}` : ''
  const copies = `${counted(committed.length, 'PDP copy', 'PDP copies')} committed on chain`
  const its = committed.length === 1 ? 'its' : 'their'
  return offloadWaits ? `${copies}; the offload waits for ${its} first proof${when}` : `${copies}, ${its} first proof${when || ' to come'}`
}

/**
 * "the PDP copy on pdp:2 missed its proof; it stops counting in about 20 hours unless its provider proves again
 * (another copy is made then)": each proved copy that missed its proof, when it stops counting from the chain's
 * head (its epoch until the chain has been read).
 */
function missedProofWords(deals: readonly GroupDeal[], f: PdpFacts): string | undefined {
  const missing = deals.filter((d) => d.state === 'active' && d.stopsCountingEpoch !== undefined)
  if (missing.length === 0) return undefined
  return missing
    .map((d) => {
      const when = f.head === undefined ? `after epoch ${d.stopsCountingEpoch}` : inWallTime(d.stopsCountingEpoch! - f.head, f.epochSeconds)
      return `the PDP copy on ${d.provider} missed its proof; it stops counting ${when} unless its provider proves again (another copy is made then)`
    })
    .join('; ')
}
