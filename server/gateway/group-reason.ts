import type { GroupReasonCode as WireReasonCode } from '../shared/contracts/file-info.ts'
import type { GroupRecord } from './content/index.ts'
import type { RouteProgress } from './deals/route.ts'
import type { DealProgress } from './deals/index.ts'
import { failureText } from '../shared/contracts/copy-failure.ts'
import { bytes } from './words.ts'

export interface ReasonContext {
  /** Target size of a group, and how long it stays open without new data. */
  groupSize: number
  groupIdleSeconds: number
  /** How long a group holding only folders' listings waits for a file's data (LISTING_WAIT_SECONDS). */
  listingWaitSeconds: number
  /** The deal engine's view of a group; undefined when this gateway makes no deals. */
  progress?: (groupId: number) => DealProgress
  /** Free bytes on the data disk, for a group being sealed (its CAR file needs about its size). */
  freeBytes?: number
}

/**
 * Every reason a group can give, one code each, with the facts its sentence
 * needs. A UI counts groups by `code`; people read the sentence `wordReason`
 * makes of it. Adding a reason means adding a code here and its wording below.
 * While deals are under way each storage route words its own steps.
 */
export type GroupReason =
  | { code: 'WAITING_FOR_DATA'; size: number; groupSize: number; idleSeconds: number; listingWaitSeconds?: number }
  | { code: 'WAITING_FOR_DISK_SPACE'; size: number; freeBytes: number }
  | { code: 'SEALING' }
  | { code: 'CHECKING_CAR' }
  | { code: 'RELOADING' }
  | { code: 'RELEASING'; why: 'repaired' | 'given-up' }
  | { code: 'NO_DEAL_SERVICE' }
  | ({ code: 'DEALS_UNDER_WAY'; steps: string[] } & DealNote)
  | ({ code: 'WAITING_FOR_FUNDS'; words: string } & DealNote)
  | ({ code: 'DEAL_SERVICE_UNREACHABLE'; words: string } & DealNote)
  | ({ code: 'NO_PROVIDER'; why: string; failedDeals: number; failures: string[]; next?: string } & DealNote)
  | ({ code: 'WAITING_FOR_UPLOAD_SLOT'; words: string } & DealNote)
  | ({ code: 'LOOKING_FOR_PROVIDERS' } & DealNote)
  | ({ code: 'CONTRACT_REFUSED'; words: string } & DealNote)
  | ({ code: 'CHAIN_UNREACHABLE'; words: string } & DealNote)
  | ({ code: 'PROOF_MISSED'; words: string } & DealNote)

export type GroupReasonCode = GroupReason['code']

/** The reasons a group's copies give (each may carry a DealNote). */
type DealReason = Extract<GroupReason, DealNote>

// The wire's closed list (shared/contracts/file-info.ts) and the reasons worded here are the same codes.
const sameCodes: [GroupReasonCode, WireReasonCode] extends [WireReasonCode, GroupReasonCode] ? true : never = true
void sameCodes

/**
 * Said after any deal reason: what the group's copies on other routes are doing meanwhile (when one route holds
 * it back), and which deals are made now, when verified ones were asked for (FIP-0118).
 */
interface DealNote {
  meanwhile?: string[]
  note?: string
  /** The group was reloaded from a provider for these copies (a repair): said first. */
  reloaded?: boolean
}

type Wording = { [C in GroupReasonCode]: (r: Extract<GroupReason, { code: C }>) => string }

const WORDING: Wording = {
  WAITING_FOR_DATA: (r) =>
    r.listingWaitSeconds === undefined
      ? `waiting for more data: ${bytes(r.size)} of ${bytes(r.groupSize)}; the group closes when full or after ${r.idleSeconds} s without new data`
      : `waiting for a file's data: ${bytes(r.size)} of ${bytes(r.groupSize)}, folder listings only, which go with the next upload; the group closes ${r.idleSeconds} s after a file's data joins it, when full, or ${r.listingWaitSeconds} s after it opened`,
  WAITING_FOR_DISK_SPACE: (r) =>
    `waiting for disk space: sealing needs about ${bytes(r.size)} for the CAR file and ${bytes(r.freeBytes)} are free`,
  SEALING: () => 'sealing: writing the CAR file and computing its piece CID',
  CHECKING_CAR: () => 'sealing: checking the CAR file against its piece CID',
  RELOADING: () => 'reloading the data from a storage provider to make new copies',
  RELEASING: (r) =>
    r.why === 'repaired'
      ? 'its new copies are made: removing the data reloaded for them from this gateway'
      : 'its new copies were not made in time: removing the reloaded data from this gateway; it is reloaded again later',
  NO_DEAL_SERVICE: () => 'ready for deals, but this gateway makes none: it has no deal service (SERVICE_URL)',
  DEALS_UNDER_WAY: (r) => noted(r, r.steps.join('; ')),
  WAITING_FOR_FUNDS: (r) => noted(r, r.words),
  DEAL_SERVICE_UNREACHABLE: (r) => noted(r, r.words),
  NO_PROVIDER: (r) => {
    const failed =
      r.failedDeals > 0 ? ` (${r.failedDeals} earlier ${r.failedDeals === 1 ? 'deal' : 'deals'} failed: ${r.failures.join(', ')})` : ''
    return noted(r, `no provider takes this piece right now: ${r.why}${failed}; asking again ${r.next ?? 'on every pass'}`)
  },
  WAITING_FOR_UPLOAD_SLOT: (r) => noted(r, r.words),
  LOOKING_FOR_PROVIDERS: (r) => noted(r, 'looking for storage providers'),
  CONTRACT_REFUSED: (r) => noted(r, r.words),
  CHAIN_UNREACHABLE: (r) => noted(r, r.words),
  PROOF_MISSED: (r) => noted(r, r.words),
}

const noted = (r: DealNote, sentence: string) => {
  const reloaded = r.reloaded ? `reloaded to make new copies: ${sentence}` : sentence
  const meanwhile = r.meanwhile?.length ? `${reloaded}; meanwhile: ${r.meanwhile.join('; ')}` : reloaded
  return r.note ? `${meanwhile} (${r.note})` : meanwhile
}

/** The sentence for a reason, as /file-info's `reason` gives it. */
export function wordReason(r: GroupReason): string {
  return (WORDING[r.code] as (r: GroupReason) => string)(r)
}

/**
 * "Why is my file not stored yet?" for one group: what it waits for, and
 * until when where we know. Undefined once there is nothing to wait for
 * (offloaded). Shown in /file-info's groups as the optional, additive fields
 * `reason` (the sentence) and `reasonCode`.
 */
export function groupReason(g: GroupRecord, c: ReasonContext): { code: GroupReasonCode; text: string } | undefined {
  const r = reasonOf(g, c)
  return r && { code: r.code, text: wordReason(r) }
}

/** What holds the group up, as a code and its facts. */
export function reasonOf(g: GroupRecord, c: ReasonContext): GroupReason | undefined {
  switch (g.state) {
    case 'writable':
      // Too little room to seal what it holds (the disk is full): more data cannot come, and waiting will not help.
      if (c.freeBytes !== undefined && c.freeBytes < g.size) return { code: 'WAITING_FOR_DISK_SPACE', size: g.size, freeBytes: c.freeBytes }
      return {
        code: 'WAITING_FOR_DATA',
        size: g.size,
        groupSize: c.groupSize,
        idleSeconds: c.groupIdleSeconds,
        // Listings alone are not sealed when idle (content/group-closing.ts).
        ...(g.listingsOnly ? { listingWaitSeconds: c.listingWaitSeconds } : {}),
      }
    case 'full':
      if (c.freeBytes !== undefined && c.freeBytes < g.size) return { code: 'WAITING_FOR_DISK_SPACE', size: g.size, freeBytes: c.freeBytes }
      return { code: 'SEALING' }
    case 'VRCARDone':
      return { code: 'CHECKING_CAR' }
    case 'reload':
      return reloadReason(c.progress?.(g.id))
    case 'offloaded':
      // Stored: nothing to wait for, unless a copy missed its proof.
      return c.progress ? missedProofReason(c.progress(g.id)) : undefined
    case 'ready_for_deals':
      return c.progress ? dealReason(c.progress(g.id)) : { code: 'NO_DEAL_SERVICE' }
  }
}

/**
 * A group reloaded for repair, at each phase: its data coming back from a
 * provider, then what its new copies wait for or how they stand (funds, an
 * upload's turn, a provider, uploading, committed and waiting for a proof:
 * as a group ready for deals says it, said as reloaded), then its local bytes
 * going again. A group in `reload` the engine does not repair (a restart's,
 * before the engine sweeps it back) is reloading.
 */
function reloadReason(p: DealProgress | undefined): GroupReason {
  const repair = p?.repair
  if (!p || !repair || repair.phase === 'reloading') return { code: 'RELOADING' }
  if (repair.phase === 'releasing') return { code: 'RELEASING', why: repair.why }
  return { ...dealReason(p), reloaded: true }
}

/**
 * Which blocks the group's reason names first: what a person must fix (a contract that refuses the
 * gateway, funds), then what is down, then a provider, then what passes by itself.
 */
const BLOCK_ORDER = [
  'CONTRACT_REFUSED',
  'WAITING_FOR_FUNDS',
  'CHAIN_UNREACHABLE',
  'DEAL_SERVICE_UNREACHABLE',
  'NO_PROVIDER',
  'PROOF_MISSED',
  'WAITING_FOR_UPLOAD_SLOT',
] as const

/** A copy that missed its proof, as its route words it: told whatever else the group does. */
const missedProofs = (p: DealProgress) => p.routes.flatMap((r) => (r.missedProof ? [r.missedProof] : []))

/** An offloaded group's reason: only a copy that missed its proof. */
function missedProofReason(p: DealProgress): GroupReason | undefined {
  const words = missedProofs(p)
  return words.length > 0 ? { code: 'PROOF_MISSED', words: words.join('; ') } : undefined
}

/**
 * The group's reason from its routes. A route that holds the group back
 * (blocked, none of its copies moving) names it, whatever the other routes
 * do, their steps said after it: funds before the deal service before
 * providers before a copy that missed its proof (told even while copies
 * move) before an upload's turn, routes in order. Otherwise their steps
 * while any has copies under way, else the search for providers.
 */
function dealReason(p: DealProgress): DealReason {
  const notes = p.routes.flatMap((r) => (r.note ? [r.note] : []))
  const note = notes.length > 0 ? { note: notes.join('; ') } : {}
  const held: { code: (typeof BLOCK_ORDER)[number]; words: string; next?: string }[] = p.routes.flatMap((r: RouteProgress) =>
    r.blocked && !r.underWay ? [r.blocked] : [],
  )
  const missed = missedProofs(p)
  if (missed.length > 0) held.push({ code: 'PROOF_MISSED', words: missed.join('; ') })
  const block = BLOCK_ORDER.map((code) => held.find((b) => b.code === code)).find((b) => b !== undefined)
  if (!block && p.routes.some((r) => r.underWay)) return { code: 'DEALS_UNDER_WAY', steps: p.routes.flatMap((r) => r.steps), ...note }
  if (!block) return { code: 'LOOKING_FOR_PROVIDERS', ...note }
  const steps = p.routes.flatMap((r) => r.steps).filter((s) => s !== block.words)
  const context = { ...(steps.length > 0 ? { meanwhile: steps } : {}), ...note }
  if (block.code === 'NO_PROVIDER') {
    const failed = p.deals.filter((d) => d.state === 'failed')
    const failures = [...new Set(failed.map((d) => (d.failure ? failureText(d.failure) : 'unknown')))]
    return {
      code: 'NO_PROVIDER',
      why: block.words,
      failedDeals: failed.length,
      failures,
      ...(block.next ? { next: block.next } : {}),
      ...context,
    }
  }
  return { code: block.code, words: block.words, ...context }
}
