import { getCanonicalLocale, getLanguage } from '@nextcloud/l10n'

/** `bafybeigdyr…hk3u`: enough to recognise, short enough for a sidebar. */
export function shortenCid(cid: string, head = 10, tail = 6): string {
  return cid.length <= head + tail + 1 ? cid : `${cid.slice(0, head)}…${cid.slice(-tail)}`
}

/** Local date and time in the user's Nextcloud locale, e.g. "12 Mar 2026, 14:05". */
export function formatLocalDate(unixSeconds: number, locale = getCanonicalLocale()): string {
  return new Intl.DateTimeFormat(locale || undefined, { dateStyle: 'medium', timeStyle: 'short' })
    .format(new Date(unixSeconds * 1000))
}

const UNITS: Array<[Intl.RelativeTimeFormatUnit, number]> = [
  ['year', 365.25 * 86400],
  ['month', 30.44 * 86400],
  ['week', 7 * 86400],
  ['day', 86400],
  ['hour', 3600],
  ['minute', 60],
]

/**
 * "in 3 months", "2 years ago", "tomorrow": the largest whole unit, through
 * Intl.RelativeTimeFormat in the user's language. (Storage ends years away,
 * so years and months matter more than seconds here.)
 */
export function formatRelative(unixSeconds: number, nowMs = Date.now(), language = getLanguage()): string {
  const diff = unixSeconds - nowMs / 1000
  const format = new Intl.RelativeTimeFormat(language || undefined, { numeric: 'auto' })
  for (const [unit, seconds] of UNITS) {
    if (Math.abs(diff) >= seconds) return format.format(Math.round(diff / seconds), unit)
  }
  return format.format(Math.round(diff), 'second')
}

/** For `<time datetime>`: machine-readable, so assistive tech and tests can rely on it. */
export function isoDate(unixSeconds: number): string {
  return new Date(unixSeconds * 1000).toISOString()
}
