import type { FileState } from '../shared/contracts/file-info.ts'
import type { GroupRecord } from './content/index.ts'

export type { FileState }

const STAGING = new Set(['writable', 'full', 'VRCARDone'])

/**
 * A file's state from its groups (the spec's table): `staging` while any group
 * is not ready yet (or there is none), `offloaded` once all are offloaded,
 * `partially_offloaded` when every group has an active deal, else `offloading`.
 */
export function fileState(groups: readonly GroupRecord[]): FileState {
  if (groups.length === 0 || groups.some((g) => STAGING.has(g.state))) return 'staging'
  if (groups.every((g) => g.state === 'offloaded')) return 'offloaded'
  if (groups.every((g) => g.deals.some((d) => d.state === 'active'))) return 'partially_offloaded'
  return 'offloading'
}

/** Copies of the whole file that can be retrieved: the minimum over its groups (0 without groups). */
export function retrievableCopies(groups: readonly GroupRecord[]): number {
  return groups.length === 0 ? 0 : groups.reduce((min, g) => Math.min(min, g.retrievableCopies), Infinity)
}
