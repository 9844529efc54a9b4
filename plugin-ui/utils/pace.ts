/**
 * While a state can still change, the tab and the list's badges ask again this
 * often. Its own module: the script every Files page loads reads it, and
 * states.ts would bring @nextcloud/l10n along.
 */
export const REFRESH_INTERVAL_MS = 10_000
