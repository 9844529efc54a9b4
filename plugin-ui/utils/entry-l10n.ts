/**
 * Translation for what the init script shows (the tab's name, the badges'
 * tooltips, the file actions' names): read from the registry Nextcloud's l10n
 * fills for the app, which is what `t('gateway', …)` reads. Not `t` itself: it
 * brings a 13 KB HTML sanitizer into every Files page for a few plain words.
 *
 * @example translate('{n} copies', { n: 2 }) // '2 copies', or the user's language
 */
export function translate(text: string, vars: Record<string, string | number> = {}): string {
  const registry = (globalThis as { _oc_l10n_registry_translations?: Record<string, Record<string, string | string[]>> })
    ._oc_l10n_registry_translations
  const found = registry?.gateway?.[text]
  const translated = (Array.isArray(found) ? found[0] : found) || text
  return translated.replace(/\{(\w+)\}/g, (match, key: string) => (key in vars ? String(vars[key]) : match))
}
