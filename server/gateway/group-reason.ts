import type { GroupReasonCode as WireReasonCode } from '../shared/contracts/file-info.ts'
import type { GroupRecord } from './content/index.ts'
import type { DealProgress } from './deals/types.ts'

export interface ReasonContext {
  /** Target size of a group, and how long it stays open without new data. */
  groupSize: number
  groupIdleSeconds: number
  /** The deal engine's view of a group; undefined when this gateway makes no deals. */
  progress?: (groupId: number) => DealProgress
  /** Free bytes on the data disk, for a group being sealed (its CAR file needs about its size). */
  freeBytes?: number
}

/**
 * Every reason a group can give, one code each, with the facts its sentence
 * needs. A UI counts groups by `code`; people read the sentence `wordReason`
 * makes of it. Adding a reason means adding a code here and its wording below.
 */
export type GroupReason =
  | { code: 'WAITING_FOR_DATA'; size: number; groupSize: number; idleSeconds: number }
  | { code: 'WAITING_FOR_DISK_SPACE'; size: number; freeBytes: number }
  | { code: 'SEALING' }
  | { code: 'CHECKING_CAR' }
  | { code: 'RELOADING' }
  | { code: 'NO_DEAL_SERVICE' }
  | ({
      code: 'DEALS_UNDER_WAY'
      stored: number
      copies: number
      fetching: number
      sealing: number
      startsIn?: string
      pdp?: PdpSteps
    } & DealNote)
  | ({ code: 'WAITING_FOR_FUNDS'; problem: string } & DealNote)
  | ({ code: 'DEAL_SERVICE_UNREACHABLE' } & DealNote)
  | ({ code: 'NO_PROVIDER'; why: string; failedDeals: number; failures: string[] } & DealNote)
  | ({ code: 'LOOKING_FOR_PROVIDERS' } & DealNote)

export type GroupReasonCode = GroupReason['code']

// The wire's closed list (shared/contracts/file-info.ts) and the reasons worded here are the same codes.
const sameCodes: [GroupReasonCode, WireReasonCode] extends [WireReasonCode, GroupReasonCode] ? true : never = true
void sameCodes

/** Where a group's PDP copies stand (Filecoin Onchain Cloud), and what stops more. */
interface PdpSteps {
  proved: number
  copies: number
  /** Providers being uploaded to, and how much of the CAR has been sent. */
  uploading?: { providers: number; percent: number }
  /** Copies whose piece is being added on chain. */
  adding: number
  /** Copies on chain waiting for their first proof, and when the first is due. */
  awaitingProof: number
  proofDueIn?: string
  /** Why no more are being made (no funds, refused). */
  problem?: string
}

/** Said after any deal reason: which deals are made now, when verified ones were asked for (FIP-0118). */
interface DealNote {
  note?: string
}

type Wording = { [C in GroupReasonCode]: (r: Extract<GroupReason, { code: C }>) => string }

const WORDING: Wording = {
  WAITING_FOR_DATA: (r) =>
    `waiting for more data: ${bytes(r.size)} of ${bytes(r.groupSize)}; the group closes when full or after ${r.idleSeconds} s without new data`,
  WAITING_FOR_DISK_SPACE: (r) =>
    `waiting for disk space: sealing needs about ${bytes(r.size)} for the CAR file and ${bytes(r.freeBytes)} are free`,
  SEALING: () => 'sealing: writing the CAR file and computing its piece CID',
  CHECKING_CAR: () => 'sealing: checking the CAR file against its piece CID',
  RELOADING: () => 'reloading the data from a storage provider',
  NO_DEAL_SERVICE: () => 'ready for deals, but this gateway makes none: it has no deal service (SERVICE_URL)',
  DEALS_UNDER_WAY: (r) => {
    const parts: string[] = []
    if (r.stored > 0) parts.push(`${r.stored} of ${r.copies} ${r.copies === 1 ? 'copy' : 'copies'} stored`)
    if (r.fetching > 0) parts.push(`${r.fetching} ${r.fetching === 1 ? 'provider is' : 'providers are'} fetching the data`)
    if (r.sealing > 0)
      parts.push(
        `waiting for ${r.sealing === 1 ? 'the provider' : `${r.sealing} providers`} to seal: at the latest by the deal's start${r.startsIn ? `, ${r.startsIn}` : ''}`,
      )
    if (r.pdp) parts.push(...pdpParts(r.pdp))
    return noted(r, parts.join('; '))
  },
  // The PDP route's problem already opens with "no funds: deposit USDFC".
  WAITING_FOR_FUNDS: (r) => noted(r, r.problem.startsWith('no funds') ? r.problem : `waiting for funds: ${r.problem}`),
  DEAL_SERVICE_UNREACHABLE: (r) => noted(r, 'waiting for the deal service, which cannot be reached right now'),
  NO_PROVIDER: (r) => {
    const failed =
      r.failedDeals > 0 ? ` (${r.failedDeals} earlier ${r.failedDeals === 1 ? 'deal' : 'deals'} failed: ${r.failures.join(', ')})` : ''
    return noted(r, `no provider takes this piece right now: ${r.why}${failed}; asking again on every pass`)
  },
  LOOKING_FOR_PROVIDERS: (r) => noted(r, 'looking for storage providers'),
}

function pdpParts(p: PdpSteps): string[] {
  const parts: string[] = []
  if (p.proved > 0) parts.push(`${p.proved} of ${p.copies} PDP ${p.copies === 1 ? 'copy' : 'copies'} proved`)
  if (p.uploading)
    parts.push(
      `uploading to ${p.uploading.providers} ${p.uploading.providers === 1 ? 'provider' : 'providers'} (${p.uploading.percent} % sent)`,
    )
  if (p.adding > 0) parts.push('waiting for the piece to be added on chain')
  if (p.awaitingProof > 0) parts.push(`first proof due ${p.proofDueIn ?? 'soon'}`)
  if (p.problem) parts.push(p.problem)
  return parts
}

const noted = (r: DealNote, sentence: string) => (r.note ? `${sentence} (${r.note})` : sentence)

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
      return { code: 'WAITING_FOR_DATA', size: g.size, groupSize: c.groupSize, idleSeconds: c.groupIdleSeconds }
    case 'full':
      if (c.freeBytes !== undefined && c.freeBytes < g.size) return { code: 'WAITING_FOR_DISK_SPACE', size: g.size, freeBytes: c.freeBytes }
      return { code: 'SEALING' }
    case 'VRCARDone':
      return { code: 'CHECKING_CAR' }
    case 'reload':
      return { code: 'RELOADING' }
    case 'offloaded':
      return undefined
    case 'ready_for_deals':
      return c.progress ? dealReason(c.progress(g.id)) : { code: 'NO_DEAL_SERVICE' }
  }
}

/** The PDP route's steps for a group, or undefined when nothing happens on it. */
function pdpSteps(p: DealProgress): PdpSteps | undefined {
  if (!p.pdp) return undefined
  const copies = p.deals.filter((d) => d.route === 'pdp')
  const inState = (...states: string[]) => copies.filter((d) => states.includes(d.state)).length
  const { upload, firstProofIn } = p.pdp
  const dueIn = [...firstProofIn.values()]
  const steps: PdpSteps = {
    proved: inState('active'),
    copies: p.pdp.copies,
    ...(upload && upload.adding === 0
      ? { uploading: { providers: upload.copies, percent: Math.floor((100 * upload.bytes) / upload.total) } }
      : {}),
    adding: upload && upload.adding > 0 ? upload.adding : inState('proposed'),
    awaitingProof: inState('published'),
    ...(dueIn.length > 0 ? { proofDueIn: inWallTime(Math.min(...dueIn), p.epochSeconds) } : {}),
  }
  const problem = p.pdp.fundsError ?? (p.pdp.refused && !upload ? `PDP provider refused: ${p.pdp.refused}` : undefined)
  if (problem && steps.proved < steps.copies) steps.problem = problem
  return steps.proved > 0 || steps.uploading || steps.adding > 0 || steps.awaitingProof > 0 || steps.problem ? steps : undefined
}

function dealReason(p: DealProgress): GroupReason {
  const note = p.dealKind.note ? { note: p.dealKind.note } : {}
  const market = p.deals.filter((d) => d.route !== 'pdp')
  const count = (state: string) => market.filter((d) => d.state === state).length
  const fetching = count('proposing') + count('proposed')
  const published = market.filter((d) => d.state === 'published')
  const stored = count('active')
  const pdp = pdpSteps(p)
  const pdpUnderWay = pdp && (pdp.proved > 0 || pdp.uploading || pdp.adding > 0 || pdp.awaitingProof > 0)
  if (stored > 0 || fetching > 0 || published.length > 0 || pdpUnderWay) {
    const start = published.length > 0 ? Math.min(...published.map((d) => d.startEpoch)) : undefined
    // An epoch number means nothing to a person: the start is said as a time from now. It is the provider's
    // deadline, not a forecast: a provider proves the sector when it is sealed, often well before.
    const startsIn = start === undefined || p.head === undefined ? undefined : inWallTime(start - p.head, p.epochSeconds)
    return {
      code: 'DEALS_UNDER_WAY',
      stored,
      copies: p.copies,
      fetching,
      sealing: published.length,
      ...(startsIn ? { startsIn } : {}),
      ...(pdp ? { pdp } : {}),
      ...note,
    }
  }
  const fundsError = p.fundsError ?? p.pdp?.fundsError
  if (fundsError) return { code: 'WAITING_FOR_FUNDS', problem: fundsError, ...note }
  if (p.serviceError) return { code: 'DEAL_SERVICE_UNREACHABLE', ...note }
  if (p.noProviders || pdp?.problem) {
    const failed = p.deals.filter((d) => d.state === 'failed')
    return {
      code: 'NO_PROVIDER',
      why: (p.noProviders ?? pdp?.problem)!,
      failedDeals: failed.length,
      failures: [...new Set(failed.map((d) => d.reason ?? 'unknown'))],
      ...note,
    }
  }
  return { code: 'LOOKING_FOR_PROVIDERS', ...note }
}

const bytes = (n: number) => {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB']
  let i = 0
  let v = n
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024
    i++
  }
  return i === 0 ? `${n} bytes` : `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`
}

/** Epochs from now in wall-clock time ("in about 2 days"; minutes on a sped-up simulated network). */
function inWallTime(epochs: number, epochSeconds: number): string {
  if (epochs <= 0) return 'any moment now'
  const seconds = epochs * epochSeconds
  const [value, unit] =
    seconds < 90
      ? [seconds, 'second']
      : seconds < 3600
        ? [seconds / 60, 'minute']
        : seconds < 2 * 86_400
          ? [seconds / 3600, 'hour']
          : [seconds / 86_400, 'day']
  const n = Math.max(1, Math.round(value))
  return `in about ${n} ${unit}${n === 1 ? '' : 's'}`
}
