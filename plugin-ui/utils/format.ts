import { formatRelativeTime, getCanonicalLocale, getLanguage, t } from '@nextcloud/l10n'

/** `bafybeigdyr…hk3u`: enough to recognise, short enough for a sidebar. */
export function shortenCid(cid: string, head = 10, tail = 6): string {
  return cid.length <= head + tail + 1 ? cid : `${cid.slice(0, head)}…${cid.slice(-tail)}`
}

/** Local date and time in the user's Nextcloud locale, e.g. "12 Mar 2026, 14:05". */
export function formatLocalDate(unixSeconds: number, locale = getCanonicalLocale()): string {
  return new Intl.DateTimeFormat(locale || undefined, { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(unixSeconds * 1000))
}

/** Nextcloud's `formatRelativeTime` turns to a calendar date from here on; the tab already shows the date. */
const RELATIVE_LIMIT_SECONDS = 27.5 * 86400

/**
 * "in 3 days", "2 weeks ago", "tomorrow": Nextcloud's own relative time
 * (`formatRelativeTime` of @nextcloud/l10n, as NcDateTime shows it), only
 * while it is a relative phrase. Further away Nextcloud shows a date, which
 * the tab already gives beside it, so this answers undefined: no
 * "(next year)" for a date 18 months away.
 */
export function relativeTime(unixSeconds: number, language = getLanguage()): string | undefined {
  if (Math.abs(unixSeconds - Date.now() / 1000) >= RELATIVE_LIMIT_SECONDS) return undefined
  return formatRelativeTime(unixSeconds * 1000, { language })
}

/** "32 GiB", "1.5 TiB": a byte count (a decimal string, as DataCap comes) in binary units, one decimal below 10. */
export function formatBytes(bytes: string | number, locale = getCanonicalLocale()): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB']
  let value = Number(bytes)
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return `${new Intl.NumberFormat(locale || undefined, { maximumFractionDigits: value < 10 && unit > 0 ? 1 : 0 }).format(value)} ${units[unit]}`
}

/** For `<time datetime>`: machine-readable, so assistive tech and tests can rely on it. */
export function isoDate(unixSeconds: number): string {
  return new Date(unixSeconds * 1000).toISOString()
}

/**
 * When a PDP copy was last proved, in plain words: "proved today at 14:05",
 * "proved yesterday at 09:12", else "proved on 3 Mar 2027, 14:05", in the
 * user's locale and time zone.
 */
export function provedAt(unixSeconds: number, now = Date.now(), locale = getCanonicalLocale()): string {
  const at = new Date(unixSeconds * 1000)
  const days = daysBetween(at, new Date(now))
  const time = new Intl.DateTimeFormat(locale || undefined, { timeStyle: 'short' }).format(at)
  if (days === 0) return t('gateway', 'proved today at {time}', { time })
  if (days === 1) return t('gateway', 'proved yesterday at {time}', { time })
  return t('gateway', 'proved on {date}', { date: formatLocalDate(unixSeconds, locale) })
}

/**
 * When a committed PDP copy's first proof is due, in plain words: "first
 * proof due today about 14:20", "first proof due tomorrow about 09:10", else
 * "first proof due on 3 Mar 2027, 14:20", in the user's locale and time zone;
 * "first proof due any moment now" once that time has come (the proof lands
 * within its challenge window, not at an exact minute).
 */
export function firstProofDueAt(unixSeconds: number, now = Date.now(), locale = getCanonicalLocale()): string {
  if (unixSeconds * 1000 <= now) return t('gateway', 'first proof due any moment now')
  const at = new Date(unixSeconds * 1000)
  const days = daysBetween(new Date(now), at)
  const time = new Intl.DateTimeFormat(locale || undefined, { timeStyle: 'short' }).format(at)
  if (days === 0) return t('gateway', 'first proof due today about {time}', { time })
  if (days === 1) return t('gateway', 'first proof due tomorrow about {time}', { time })
  return t('gateway', 'first proof due on {date}', { date: formatLocalDate(unixSeconds, locale) })
}

/**
 * A proved PDP copy that missed its proof, in plain words: "missed its proof
 * on 27 Nov 2026, 10:05; stops counting after 29 Nov 2026, 10:05", dated in
 * the user's locale and time zone; a moment the record gives no date for is
 * said as its epoch ("after epoch 1960").
 */
export function missedProofWords(
  missed: { epoch: number; at?: number },
  stops: { epoch: number; at?: number },
  locale = getCanonicalLocale(),
): string {
  const on = missed.at === undefined ? t('gateway', 'at epoch {epoch}', { epoch: missed.epoch }) : formatLocalDate(missed.at, locale)
  const after = stops.at === undefined ? t('gateway', 'epoch {epoch}', { epoch: stops.epoch }) : formatLocalDate(stops.at, locale)
  return missed.at === undefined
    ? t('gateway', 'missed its proof {on}; stops counting after {after}', { on, after })
    : t('gateway', 'missed its proof on {on}; stops counting after {after}', { on, after })
}

/** Calendar days from `from` to `to` in the local time zone (1: `to` is the next day). */
function daysBetween(from: Date, to: Date): number {
  const dayOf = (d: Date) => new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime()
  return Math.round((dayOf(to) - dayOf(from)) / 86_400_000)
}
