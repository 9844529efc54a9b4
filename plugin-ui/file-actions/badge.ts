/**
 * The state badge beside a name in the Files list: a small icon in the
 * state's colour, the state in words as its tooltip (and its accessible name).
 */
import type { FolderEntry } from './folder-states.ts'

import { translate } from '../utils/entry-l10n.ts'

export type BadgeKind = 'stored' | 'on-its-way' | 'staging' | 'attention'

// Drawn for this app on a 24×24 grid, one path each.
const ICONS: Record<BadgeKind, string> = {
  // A check in a circle.
  stored: 'M12 2a10 10 0 1 0 0 20 10 10 0 0 0 0-20zm-1.5 14.5-4-4 1.4-1.4 2.6 2.6 5.6-5.6 1.4 1.4-7 7z',
  // An arrow going up, over a line.
  'on-its-way': 'M12 3 6 9h4v6h4V9h4l-6-6zM5 18h14v2H5z',
  // A clock.
  staging: 'M12 2a10 10 0 1 0 0 20 10 10 0 0 0 0-20zm0 2a8 8 0 1 1 0 16 8 8 0 0 1 0-16zm-1 3v6l5 3 1-1.7-4-2.3V7h-2z',
  // A warning triangle.
  attention: 'M12 2 1 21h22L12 2zm-1 7h2v6h-2V9zm0 8h2v2h-2v-2z',
}

const COLOURS: Record<BadgeKind, string> = {
  stored: 'var(--color-success, #2d7b41)',
  'on-its-way': 'var(--color-primary-element, #00679e)',
  staging: 'var(--color-text-maxcontrast, #6b6b6b)',
  attention: 'var(--color-warning, #a37200)',
}

/** Which badge an entry gets; none for a state the bridge could not tell. */
export function badgeKind(entry: FolderEntry): BadgeKind | undefined {
  if (entry.attention) return 'attention'
  switch (entry.state) {
    case 'Offloaded':
      return 'stored'
    case 'Offloading':
    case 'Partially offloaded':
      return 'on-its-way'
    case 'Staging':
      return 'staging'
    default:
      return undefined
  }
}

const copies = (n: number) => (n === 1 ? translate('1 copy') : translate('{n} copies', { n }))

/** The badge's tooltip: the state in words, and what it means for this entry. */
export function badgeTitle(entry: FolderEntry): string {
  if (entry.attention) return translate('Filecoin: needs attention. {reason}', { reason: entry.attention.reason })
  switch (entry.state) {
    case 'Offloaded':
      return translate('Filecoin: stored ({copies})', { copies: copies(entry.retrievableCopies) })
    case 'Partially offloaded':
      return translate('Filecoin: partially offloaded, on its way ({copies} so far)', { copies: copies(entry.retrievableCopies) })
    case 'Offloading':
      return translate('Filecoin: on its way to storage providers')
    default:
      return translate('Filecoin: staging, waiting to be packed and sent')
  }
}

/** The badge element, or null for an entry without one. */
export function renderBadge(entry: FolderEntry): HTMLElement | null {
  const kind = badgeKind(entry)
  if (!kind) return null
  const badge = document.createElement('span')
  const title = badgeTitle(entry)
  badge.className = 'gateway-badge'
  badge.dataset.gatewayBadge = kind
  badge.title = title
  badge.setAttribute('role', 'img')
  badge.setAttribute('aria-label', title)
  badge.style.cssText = `display:inline-flex;align-items:center;justify-content:center;width:34px;height:34px;color:${COLOURS[kind]}`
  // Static markup of this module's own icons; the words go in through title and aria-label.
  badge.innerHTML = `<svg viewBox="0 0 24 24" width="16" height="16" aria-hidden="true"><path fill="currentColor" d="${ICONS[kind]}"/></svg>`
  return badge
}
