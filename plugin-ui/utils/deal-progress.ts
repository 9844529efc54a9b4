import type { Group } from '../types.ts'

import { t } from '@nextcloud/l10n'

/**
 * "deals in progress: 1 active, 1 published" for a group whose deals are
 * under way, so it does not read only "ready for deals"; undefined when the
 * group has no deals or is already offloaded (its state says it all).
 */
export function dealProgress(group: Group): string | undefined {
  if (group.state === 'offloaded' || !group.deals?.length) return undefined
  const count = (state: string) => group.deals!.filter((d) => d.state === state).length
  const parts = [
    [count('active'), t('gateway', '{count} active', { count: count('active') })],
    [count('published'), t('gateway', '{count} published', { count: count('published') })],
    [count('proposed'), t('gateway', '{count} proposed', { count: count('proposed') })],
  ]
    .filter(([n]) => Number(n) > 0)
    .map(([, text]) => text)
  return t('gateway', 'deals in progress: {list}', { list: parts.join(', ') })
}
