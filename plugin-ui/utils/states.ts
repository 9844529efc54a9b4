/**
 * One place that says what each state means to a person and whether it can
 * still change (which decides auto-refresh).
 */
import type { DealState, FileState, GroupState, PdpMilestone } from '../types.ts'

import { t } from '@nextcloud/l10n'

export type Tone = 'neutral' | 'progress' | 'partial' | 'done' | 'warning'

export interface StateInfo {
  label: string
  /** One line: what it means and what happens next. */
  explanation: string
  tone: Tone
}

const FILE_STATES: readonly FileState[] = ['Staging', 'Offloading', 'Partially offloaded', 'Offloaded', 'Unknown']

/** Anything the bridge did not promise is shown as Unknown rather than trusted. */
export function normalizeFileState(state: unknown): FileState {
  return FILE_STATES.includes(state as FileState) ? (state as FileState) : 'Unknown'
}

export { REFRESH_INTERVAL_MS } from './pace.ts'

/** Offloaded is the end of the road; everything else may still move on. */
export function isFinalFileState(state: FileState): boolean {
  return state === 'Offloaded'
}

// Functions, not constants: t() must run after the app's translations are loaded.
export function fileStateInfo(state: FileState, isFolder = false): StateInfo {
  switch (state) {
    case 'Staging':
      return {
        label: t('gateway', 'Staging'),
        explanation: isFolder
          ? t('gateway', 'Some files are still being packed on the gateway; storage deals start once their groups are sealed.')
          : t('gateway', 'The file is being packed on the gateway; storage deals start once its group is sealed.'),
        tone: 'neutral',
      }
    case 'Offloading':
      return {
        label: t('gateway', 'Offloading'),
        explanation: t(
          'gateway',
          'Storage deals are being made with providers; the data stays on the gateway until enough copies are active.',
        ),
        tone: 'progress',
      }
    case 'Partially offloaded':
      return {
        label: t('gateway', 'Partially offloaded'),
        explanation: t('gateway', 'Every group has an active deal; more copies are being made before the gateway frees its local copy.'),
        tone: 'partial',
      }
    case 'Offloaded':
      return {
        label: t('gateway', 'Offloaded'),
        explanation: isFolder
          ? t('gateway', 'Everything in this folder is kept by storage providers; opening a file fetches it back.')
          : t('gateway', 'Kept by storage providers, the local copy freed; opening the file fetches it back from one.'),
        tone: 'done',
      }
    default:
      return {
        label: t('gateway', 'Unknown'),
        explanation: t('gateway', 'The gateway did not report a state for this item; it may still be processing it.'),
        tone: 'warning',
      }
  }
}

export function groupStateLabel(state: GroupState | string): string {
  switch (state) {
    case 'writable':
      return t('gateway', 'Accepting data')
    case 'full':
      return t('gateway', 'Full, being sealed')
    case 'VRCARDone':
      return t('gateway', 'Sealed, piece CID computed')
    case 'ready for deals':
      return t('gateway', 'Ready for deals')
    case 'offloaded':
      return t('gateway', 'Offloaded')
    case 'reload':
      return t('gateway', 'Being fetched back')
    default:
      return t('gateway', 'Unknown')
  }
}

/** A PDP copy's milestone, from the gateway's `milestone` or else its deal state: uploading → committed → proved. */
export function pdpMilestoneOf(deal: { state: DealState | string; milestone?: PdpMilestone }): PdpMilestone | undefined {
  if (deal.milestone) return deal.milestone
  const byState: Record<string, PdpMilestone> = { proposed: 'uploading', published: 'committed', active: 'proved' }
  return byState[deal.state]
}

/** A PDP copy's milestone in its own words: uploading, committed on chain (waiting for its first proof), proved. */
export function pdpStateLabel(deal: { state: DealState | string; milestone?: PdpMilestone }): string {
  switch (pdpMilestoneOf(deal)) {
    case 'uploading':
      return t('gateway', 'Uploading')
    case 'committed':
      return t('gateway', 'Committed on chain, not proved yet')
    case 'proved':
      return t('gateway', 'Proved')
    default:
      return t('gateway', 'Unknown')
  }
}

export function dealStateLabel(state: DealState | string): string {
  switch (state) {
    case 'proposed':
      return t('gateway', 'Proposed')
    case 'published':
      return t('gateway', 'Published')
    case 'active':
      return t('gateway', 'Active')
    default:
      return t('gateway', 'Unknown')
  }
}
