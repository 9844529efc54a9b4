import { badRequest, forbidden } from './errors.ts'
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

export function createDavUrlMapper(opts: { pathMap: PathMap; userId: string; base: string; gatewayUrl: URL }): DavUrlMapper {
  const gatewayBase = opts.gatewayUrl.pathname.replace(/\/+$/, '')
  const gatewayUrlPath = (p: ClientDavPath) => {
    const gatewayPath = opts.pathMap.toGateway(opts.userId, p.userPath)
    const slash = p.trailingSlash && !gatewayPath.endsWith('/') ? '/' : ''
    return gatewayBase + encodePath(gatewayPath) + slash
  }
  return {
    gatewayUrlPath,
    clientUrlToGateway(value) {
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
    e[0] === '#' ? String.fromCodePoint(e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10)) : XML_ENTITIES[e.toLowerCase()])
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

/** Rewrites the tagged URLs of an `If` header; lock tokens (`<opaquelocktoken:…>`, `<urn:uuid:…>`) stay. */
export function rewriteIfHeader(value: string, toGateway: (url: string) => string): string {
  return value.replace(/<([^>]*)>/g, (whole, inner: string) =>
    /^(?:https?:\/\/|\/)/i.test(inner.trim()) ? `<${toGateway(inner.trim())}>` : whole)
}
