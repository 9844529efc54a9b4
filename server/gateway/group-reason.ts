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
 * "Why is my file not stored yet?", in plain words, for one group: what it
 * waits for, and until when where we know. Undefined once there is nothing to
 * wait for (offloaded). An optional, additive field of /file-info's groups.
 */
export function groupReason(g: GroupRecord, c: ReasonContext): string | undefined {
  switch (g.state) {
    case 'writable':
      return `waiting for more data: ${bytes(g.size)} of ${bytes(c.groupSize)}; the group closes when full or after ${c.groupIdleSeconds} s without new data`
    case 'full':
      if (c.freeBytes !== undefined && c.freeBytes < g.size) return `waiting for disk space: sealing needs about ${bytes(g.size)} for the CAR file and ${bytes(c.freeBytes)} are free`
      return 'sealing: writing the CAR file and computing its piece CID'
    case 'VRCARDone':
      return 'sealing: checking the CAR file against its piece CID'
    case 'reload':
      return 'reloading the data from a storage provider'
    case 'offloaded':
      return undefined
    case 'ready_for_deals':
      return c.progress ? dealReason(c.progress(g.id)) : 'ready for deals, but this gateway makes none: it has no deal service (SERVICE_URL)'
  }
}

function dealReason(p: DealProgress): string {
  const why = dealWait(p)
  return p.dealKind.note ? `${why} (${p.dealKind.note})` : why
}

function dealWait(p: DealProgress): string {
  const count = (state: string) => p.deals.filter((d) => d.state === state).length
  const fetching = count('proposing') + count('proposed')
  const published = p.deals.filter((d) => d.state === 'published')
  const active = count('active')
  const parts: string[] = []
  if (active > 0) parts.push(`${active} of ${p.copies} ${p.copies === 1 ? 'copy' : 'copies'} stored`)
  if (fetching > 0) parts.push(`${fetching} ${fetching === 1 ? 'provider is' : 'providers are'} fetching the data`)
  if (published.length > 0) {
    const start = Math.min(...published.map((d) => d.startEpoch))
    const wait = p.head === undefined ? '' : `, ${inWallTime(start - p.head, p.epochSeconds)}`
    parts.push(`waiting for ${published.length === 1 ? 'the provider' : `${published.length} providers`} to seal: the deal starts at epoch ${start}${wait}`)
  }
  if (parts.length > 0) return parts.join('; ')
  if (p.fundsError) return `waiting for funds: ${p.fundsError}`
  if (p.serviceError) return 'waiting for the deal service, which cannot be reached right now'
  const failed = p.deals.filter((d) => d.state === 'failed')
  if (p.noProviders) {
    const refusals = failed.length > 0 ? ` (${failed.length} earlier ${failed.length === 1 ? 'deal' : 'deals'} failed: ${[...new Set(failed.map((d) => d.reason ?? 'unknown'))].join(', ')})` : ''
    return `no provider takes this piece right now: ${p.noProviders}${refusals}; asking again on every pass`
  }
  return 'looking for storage providers'
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
  const [value, unit] = seconds < 90 ? [seconds, 'second'] : seconds < 3600 ? [seconds / 60, 'minute'] : seconds < 2 * 86_400 ? [seconds / 3600, 'hour'] : [seconds / 86_400, 'day']
  const n = Math.max(1, Math.round(value))
  return `in about ${n} ${unit}${n === 1 ? '' : 's'}`
}
