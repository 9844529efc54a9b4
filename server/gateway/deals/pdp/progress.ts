import { bytes, counted, inWallTime } from '../../words.ts'
import type { RouteProgress } from '../route.ts'
import type { GroupDeal } from '../types.ts'
import type { PdpUpload } from './types.ts'

/** What the PDP route knows of one group beyond its rows. */
export interface PdpFacts {
  copies: number
  epochSeconds: number
  upload?: PdpUpload
  /** Chain epochs until each unproved copy's first challenge window opens, by deal row id. */
  firstProofIn?: ReadonlyMap<number, number>
  /** Why the last upload stored no copy (providers refused, stalled, none to ask). */
  refused?: string
  /** The group's CAR is larger than one upload takes: no copy can be made of it. */
  oversized?: { carSize: number; maxUploadBytes: number }
  /** Set while nothing is uploaded: the account cannot pay. */
  fundsError?: string
}

/**
 * Where a group's PDP copies stand, in words: proved, uploading (and how
 * much is sent), being added on chain, waiting for their first proof (and
 * when it is due); and what stops more (no funds, refused), said after the
 * steps while the group is not fully proved.
 */
export function pdpProgress(deals: readonly GroupDeal[], f: PdpFacts): RouteProgress {
  const count = (state: string) => deals.filter((d) => d.state === state).length
  const proved = count('active')
  const adding = f.upload && f.upload.adding > 0 ? f.upload.adding : count('proposed')
  const awaitingProof = count('published')
  const dueIn = [...(f.firstProofIn?.values() ?? [])]
  const steps: string[] = []
  if (proved > 0) steps.push(`${proved} of ${counted(f.copies, 'PDP copy', 'PDP copies')} proved`)
  if (f.upload && f.upload.adding === 0) {
    const percent = Math.floor((100 * f.upload.bytes) / f.upload.total)
    steps.push(`uploading to ${counted(f.upload.copies, 'provider', 'providers')} (${percent} % sent)`)
  }
  if (adding > 0) steps.push('waiting for the piece to be added on chain')
  if (awaitingProof > 0) steps.push(`first proof due ${dueIn.length > 0 ? inWallTime(Math.min(...dueIn), f.epochSeconds) : 'soon'}`)
  const underWay = steps.length > 0
  const oversized =
    f.oversized &&
    `the group's CAR (${bytes(f.oversized.carSize)}) is larger than one Onchain Cloud upload takes (${bytes(f.oversized.maxUploadBytes)}): no PDP copy can be made of it`
  const problem =
    proved < f.copies
      ? (oversized ?? f.fundsError ?? (f.refused && !f.upload ? `PDP provider refused: ${f.refused}` : undefined))
      : undefined
  // What stops more copies is told with the other steps, whichever route's they are.
  if (problem) steps.push(problem)
  return {
    underWay,
    steps,
    ...(f.fundsError && problem === f.fundsError
      ? { blocked: { code: 'WAITING_FOR_FUNDS', words: f.fundsError } }
      : problem
        ? { blocked: { code: 'NO_PROVIDER', words: problem } }
        : {}),
  }
}
