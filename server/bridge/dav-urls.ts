import { badRequest, BridgeError, forbidden } from './errors.ts'
import type { PathMap } from './path-map.ts'
import { encodePath, normaliseUserPath } from './user-path.ts'

export const DAV_FILES_PREFIX = '/remote.php/dav/files/'
export const DAV_LEGACY_PREFIX = '/remote.php/webdav'

/** Where a client URL points inside a user's files area. */
export interface ClientDavPath {
  /** The URL prefix the client used: `/remote.php/dav/files/<user>` or `/remote.php/webdav`. */
  base: string
  /** Canonical path in the user's tree (`/` for the root). */
  userPath: string
  /** Collections are often addressed with a trailing slash; WebDAV peers keep it. */
  trailingSlash: boolean
}

/** The path part of an absolute URL or an absolute path, raw (not decoded, no query). */
export function rawPathOf(value: string): string | undefined {
  const match = /^(?:[a-z][a-z0-9+.-]*:\/\/[^/?#]*)?(\/[^?#]*)?(?:[?#].*)?$/i.exec(value.trim())
  if (!match) return undefined
  return match[1] ?? (/^[a-z][a-z0-9+.-]*:\/\//i.test(value.trim()) ? '/' : undefined)
}

/**
 * Reads a raw URL path of the files area for the authenticated user.
 * Undefined when the path is not in a files area at all; 403 when it is
 * another user's; 400 when hostile (see normaliseUserPath).
 */
export function parseClientDavPath(rawPath: string, userId: string): ClientDavPath | undefined {
  let base: string
  let rest: string
  if (rawPath.startsWith(DAV_FILES_PREFIX)) {
    const after = rawPath.slice(DAV_FILES_PREFIX.length)
    const slash = after.indexOf('/')
    const ownerSegment = slash === -1 ? after : after.slice(0, slash)
    rest = slash === -1 ? '' : after.slice(slash)
    let owner: string
    try {
      owner = decodeURIComponent(ownerSegment)
    } catch {
      throw badRequest('Path has a malformed percent-encoding')
    }
    if (owner !== userId) throw forbidden('This files area belongs to another user')
    base = DAV_FILES_PREFIX + encodeURIComponent(userId)
  } else if (rawPath === DAV_LEGACY_PREFIX || rawPath.startsWith(DAV_LEGACY_PREFIX + '/')) {
    base = DAV_LEGACY_PREFIX
    rest = rawPath.slice(DAV_LEGACY_PREFIX.length)
  } else {
    return undefined
  }
  const userPath = normaliseUserPath(rest || '/', { encoding: 'url' })
  return { base, userPath, trailingSlash: rest.endsWith('/') }
}

export interface DavUrlMapper {
  /** Gateway URL path (encoded, with the gateway's base path) of a client path. */
  gatewayUrlPath(path: ClientDavPath): string
  /** A client URL (Destination, If tags) → absolute gateway URL; 403 outside this user's area. */
  clientUrlToGateway(value: string): { url: string; path: string; userPath: string }
  /** A gateway href or URL → the client's path, or undefined when outside this user's area. */
  gatewayToClient(value: string): string | undefined
}

export function createDavUrlMapper(opts: {
  pathMap: PathMap
  userId: string
  base: string
  gatewayUrl: URL
  /** The names the client reached us by (its Host, and X-Forwarded-Host from a trusted proxy): another host in a Destination is another server. */
  clientHosts: readonly (string | undefined)[]
}): DavUrlMapper {
  const ourHosts = new Set(opts.clientHosts.flatMap((h) => (h ? [h.toLowerCase()] : [])))
  const gatewayBase = opts.gatewayUrl.pathname.replace(/\/+$/, '')
  const gatewayUrlPath = (p: ClientDavPath) => {
    const gatewayPath = opts.pathMap.toGateway(opts.userId, p.userPath)
    const slash = p.trailingSlash && !gatewayPath.endsWith('/') ? '/' : ''
    return gatewayBase + encodePath(gatewayPath) + slash
  }
  return {
    gatewayUrlPath,
    clientUrlToGateway(value) {
      // RFC 4918 §9.8.4: a destination on another server is a 502, never done here.
      const host = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(value.trim())?.[1]
      if (host !== undefined && !ourHosts.has(host.replace(/^[^@]*@/, '').toLowerCase())) {
        throw new BridgeError(502, 'OTHER_SERVER', 'The destination is on another server')
      }
      const raw = rawPathOf(value)
      const parsed = raw === undefined ? undefined : parseClientDavPath(raw, opts.userId)
      if (!parsed) throw forbidden('The target must be inside your own files area')
      const path = gatewayUrlPath(parsed)
      return { url: opts.gatewayUrl.origin + path, path, userPath: parsed.userPath }
    },
    gatewayToClient(value) {
      const raw = rawPathOf(value)
      if (raw === undefined || !raw.startsWith(gatewayBase + '/')) return undefined
      let decoded: string
      try {
        decoded = decodeURIComponent(raw.slice(gatewayBase.length))
      } catch {
        return undefined
      }
      const userPath = opts.pathMap.toUser(opts.userId, decoded)
      if (userPath === undefined) return undefined
      if (userPath === '/') return opts.base + '/'
      return opts.base + encodePath(userPath) + (raw.endsWith('/') ? '/' : '')
    },
  }
}

const XML_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }
const unescapeXml = (s: string) =>
  s.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos);/gi, (_m, e: string) =>
    e[0] === '#'
      ? String.fromCodePoint(e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10))
      : XML_ENTITIES[e.toLowerCase()],
  )
const escapeXml = (s: string) => s.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'))

// Any namespace prefix (`D:href`, `d:href`, `href` with a default namespace).
const HREF = /<((?:[A-Za-z_][\w.-]*:)?href)(\s[^>]*)?>([^<]*)<\/\1\s*>/g

/** Rewrites every `href` of a multistatus (or lock, or error) body from gateway paths to client paths. */
export function rewriteHrefs(xml: string, toClient: (href: string) => string | undefined): string {
  return xml.replace(HREF, (whole, tag: string, attrs: string | undefined, text: string) => {
    const mapped = toClient(unescapeXml(text.trim()))
    return mapped === undefined ? whole : `<${tag}${attrs ?? ''}>${escapeXml(mapped)}</${tag}>`
  })
}

/**
 * Rewrites the resource tags of an `If` header (the `<url>` before a list, RFC
 * 4918 §10.4.2) to gateway URLs; lock tokens and entity tags inside the lists
 * stay. A tag that names no resource of the caller's own area (another
 * scheme or host, another user's files, not a URL) is a 412: that condition
 * cannot hold for this caller, and the gateway must never evaluate it.
 */
export function rewriteIfHeader(value: string, toGateway: (url: string) => string, ownHost: string | undefined): string {
  let out = ''
  let depth = 0
  for (let i = 0; i < value.length; i++) {
    const c = value[i]
    if (c === '(') depth++
    else if (c === ')') depth = Math.max(0, depth - 1)
    else if (c === '<' && depth === 0) {
      const end = value.indexOf('>', i)
      if (end < 0) throw foreignTag()
      out += `<${mapTag(value.slice(i + 1, end).trim(), toGateway, ownHost)}>`
      i = end
      continue
    }
    out += c
  }
  return out
}

const foreignTag = () => new BridgeError(412, 'PRECONDITION_FAILED', 'An If header tag names a resource outside your own files area')

/** The gateway URL of a tag that is a path or an http(s) URL of this host, in the caller's area; 412 otherwise. */
function mapTag(tag: string, toGateway: (url: string) => string, ownHost: string | undefined): string {
  if (/[\s<]/.test(tag)) throw foreignTag()
  const isPath = tag.startsWith('/') && !tag.startsWith('//')
  if (!isPath) {
    if (!/^https?:\/\//i.test(tag) || !URL.canParse(tag)) throw foreignTag()
    if (ownHost === undefined || new URL(tag).host.toLowerCase() !== ownHost.toLowerCase()) throw foreignTag()
  }
  try {
    return toGateway(tag)
  } catch (err) {
    // A hostile path stays a 400; another user's area is just as foreign as another host.
    if (err instanceof BridgeError && err.status === 400) throw err
    throw foreignTag()
  }
}
