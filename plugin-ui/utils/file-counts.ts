import type { FileState } from '../types.ts'

import { n, t } from '@nextcloud/l10n'

const OTHERS: readonly FileState[] = ['Partially offloaded', 'Offloading', 'Staging', 'Unknown']

/** How many files the counts hold, whatever their state. */
export function fileTotal(counts: Partial<Record<FileState, number>>): number {
  return Object.values(counts).reduce((sum, c) => sum + (c ?? 0), 0)
}

/**
 * "5 of 6 files offloaded, 1 staging": where the files of a folder are,
 * rather than only the folder's aggregate state.
 */
export function describeFileCounts(counts: Partial<Record<FileState, number>>): string {
  const total = fileTotal(counts)
  if (total === 0) return t('gateway', 'No files below this folder yet.')
  const head = n('gateway', '{offloaded} of %n file offloaded', '{offloaded} of %n files offloaded', total, {
    offloaded: counts.Offloaded ?? 0,
  })
  const rest = OTHERS.filter((s) => (counts[s] ?? 0) > 0).map((s) => otherLabel(s, counts[s]!))
  return [head, ...rest].join(', ')
}

function otherLabel(state: FileState, count: number): string {
  switch (state) {
    case 'Partially offloaded':
      return t('gateway', '{count} partially offloaded', { count })
    case 'Offloading':
      return t('gateway', '{count} offloading', { count })
    case 'Staging':
      return t('gateway', '{count} staging', { count })
    default:
      return t('gateway', '{count} unknown', { count })
  }
}
