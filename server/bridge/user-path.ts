import { MAX_PATH_LENGTH } from '../shared/contracts/metadata-record.ts'
import { badRequest, notFound } from './errors.ts'

export { MAX_PATH_LENGTH }

export interface NormaliseOptions {
  /**
   * `url` for URL paths: decoded once, a malformed escape is a 400. `literal`
   * for JSON bodies, where the Files app sends the path as Nextcloud shows it:
   * `100%41.txt` is that name, never `100A.txt`.
   */
  encoding: 'url' | 'literal'
  /** The authenticated user, to strip `/remote.php/dav/files/<user>` a client may send. */
  userId?: string
}

// A dot segment also in its encoded forms, in case a client encoded twice.
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i
const CONTROL = /[\u0000-\u001f\u007f]/
const ENCODED_HOSTILE = /%(?:00|5c)/i

/**
 * Turns a path as a user's client sends it into the canonical form of the
 * user's files tree: decoded once when it comes from a URL, leading slash, no
 * doubled or trailing slashes, Unicode in NFC as Nextcloud stores names (a
 * Mac sends NFD). Anything that could step outside (`..`, `%2e%2e`,
 * backslashes, NUL and other control characters) is a 400, never silently fixed.
 *
 * @example normaliseUserPath('/Photos//2024%20trip/', { encoding: 'url' }) // '/Photos/2024 trip'
 */
export function normaliseUserPath(raw: string, opts: NormaliseOptions): string {
  if (raw.length > MAX_PATH_LENGTH) throw badRequest(`Path is longer than ${MAX_PATH_LENGTH} characters`)
  let path = raw
  if (opts.encoding === 'url') {
    try {
      path = decodeURIComponent(raw)
    } catch {
      throw badRequest('Path has a malformed percent-encoding')
    }
  }
  path = path.normalize('NFC')
  if (path.includes('\\') || CONTROL.test(path) || ENCODED_HOSTILE.test(path)) {
    throw badRequest('Path contains a forbidden character')
  }
  const segments = path.split('/').filter((s) => s !== '')
  if (segments.some((s) => DOT_SEGMENT.test(s))) throw badRequest('Path may not contain "." or ".." segments')
  if (opts.userId !== undefined) stripDavPrefix(segments, opts.userId)
  return '/' + segments.join('/')
}

/** Removes `remote.php/dav/files/<user>` or `remote.php/webdav` in place; another user's prefix is a 404. */
function stripDavPrefix(segments: string[], userId: string): void {
  if (segments[0] !== 'remote.php') return
  if (segments[1] === 'webdav') {
    segments.splice(0, 2)
  } else if (segments[1] === 'dav' && segments[2] === 'files' && segments.length >= 4) {
    // Not saying whether another user's file exists: to this user it does not.
    if (segments[3] !== userId) throw notFound()
    segments.splice(0, 4)
  }
}

/** Directory and name of a canonical path: `/a/b.txt` → `['/a', 'b.txt']`, `/` → `['/', '']`. */
export function splitPath(path: string): [dir: string, name: string] {
  const i = path.lastIndexOf('/')
  return [i <= 0 ? '/' : path.slice(0, i), path.slice(i + 1)]
}

/** Percent-encodes each segment of a canonical path for use in a URL. */
export const encodePath = (path: string) => path.split('/').map(encodeURIComponent).join('/')
