/**
 * A group's life: `writable` (accepting blocks) → `full` (size or idle
 * threshold reached) → `VRCARDone` (CAR written, piece CID computed) →
 * `ready_for_deals` → `offloaded` (enough retrievable copies, local bytes
 * removed) ⇄ `reload` (bytes fetched back from a provider for a read, or with
 * the CAR for new deals when copies must be repaired or renewed).
 */
import type { GroupState } from '../../shared/contracts/file-info.ts'

export { GROUP_STATES, type GroupState } from '../../shared/contracts/file-info.ts'

export type GroupEvent = 'seal' | 'carWritten' | 'verified' | 'offload' | 'reload' | 'reloaded'

// The one place that decides which transitions exist.
const TRANSITIONS: Record<GroupEvent, { from: readonly GroupState[]; to: GroupState }> = {
  seal: { from: ['writable'], to: 'full' },
  carWritten: { from: ['full'], to: 'VRCARDone' },
  verified: { from: ['VRCARDone'], to: 'ready_for_deals' },
  offload: { from: ['ready_for_deals'], to: 'offloaded' },
  reload: { from: ['offloaded'], to: 'reload' },
  reloaded: { from: ['reload'], to: 'offloaded' },
}

export class GroupTransitionError extends Error {
  override name = 'GroupTransitionError'
  readonly code = 'INVALID_GROUP_TRANSITION'
}

/** Where `event` may happen and where it leads (a conditional UPDATE applies it atomically). */
export function transitionOf(event: GroupEvent): { from: readonly GroupState[]; to: GroupState } {
  return TRANSITIONS[event]
}

/** States in which a group can have deals (and so a `deals` list in /file-info). */
export function canHaveDeals(state: GroupState): boolean {
  return state === 'ready_for_deals' || state === 'offloaded' || state === 'reload'
}
