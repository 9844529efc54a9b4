import { extname } from 'node:path'

/** Common types by extension; enough for previews and downloads to behave. */
const TYPES: Record<string, string> = {
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.csv': 'text/csv; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.htm': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.json': 'application/json',
  '.xml': 'application/xml',
  '.pdf': 'application/pdf',
  '.zip': 'application/zip',
  '.gz': 'application/gzip',
  '.tar': 'application/x-tar',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.png': 'image/png',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.svg': 'image/svg+xml',
  '.heic': 'image/heic',
  '.mp3': 'audio/mpeg',
  '.ogg': 'audio/ogg',
  '.wav': 'audio/wav',
  '.mp4': 'video/mp4',
  '.mov': 'video/quicktime',
  '.webm': 'video/webm',
  '.mkv': 'video/x-matroska',
  '.doc': 'application/msword',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  '.xls': 'application/vnd.ms-excel',
  '.xlsx': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  '.ppt': 'application/vnd.ms-powerpoint',
  '.pptx': 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  '.odt': 'application/vnd.oasis.opendocument.text',
  '.ods': 'application/vnd.oasis.opendocument.spreadsheet',
  '.car': 'application/vnd.ipld.car',
}

export const DEFAULT_TYPE = 'application/octet-stream'
// What generic clients send for any body (curl --data, browsers' forms): says nothing about the file.
const MEANINGLESS = [DEFAULT_TYPE, 'application/x-www-form-urlencoded', 'multipart/form-data']

/**
 * The type to store for an upload: what the client said, unless it said
 * nothing useful (most sync clients send octet-stream for everything).
 */
export function contentTypeFor(name: string, given: string | undefined): string | null {
  const clean = given?.trim()
  if (clean && clean.length <= 255 && /^[\w.+-]+\/[\w.+-]+/.test(clean) && !MEANINGLESS.some((m) => clean.startsWith(m))) return clean
  return TYPES[extname(name).toLowerCase()] ?? null
}

/** Types a browser runs or renders with scripts: never shown inline from the app's origin. */
const ACTIVE =
  /^(text\/html|application\/xhtml\+xml|image\/svg\+xml|text\/xml|application\/xml|[\w.-]+\/[\w.-]+\+xml|text\/javascript|application\/(x-)?javascript|application\/ecmascript|text\/xsl|application\/x-shockwave-flash|multipart\/x-mixed-replace)\s*(;|$)/i

/**
 * What Nextcloud sends with WebDAV downloads, so an uploaded page cannot run
 * on the origin that serves it: no sniffing, a policy that forbids scripts
 * (sandbox), and a download instead of a page for active types, by stored
 * type or by name.
 */
export function downloadHeaders(name: string, contentType: string): Record<string, string> {
  const headers: Record<string, string> = {
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': "default-src 'none'; sandbox",
  }
  // The name counts too: a browser saving `evil.html` served as text/plain would still open it as a page.
  if (ACTIVE.test(contentType) || ACTIVE.test(TYPES[extname(name).toLowerCase()] ?? '')) {
    const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_')
    headers['Content-Disposition'] = `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`
  }
  return headers
}
