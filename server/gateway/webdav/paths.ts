import type { Request } from 'express'
import { badPath, DavError } from './errors.ts'

/** Limits on what a path may be; past them a request is a 400, not a slow query. */
export const MAX_PATH_BYTES = 4096
export const MAX_NAME_BYTES = 255

export interface DavPath {
  /** Decoded, absolute, no trailing slash; the root is `/`. */
  path: string
  /** The client wrote a trailing slash (it means "a folder"). */
  slash: boolean
}

/**
 * Turns the raw URL path of a request (below the mount point) into a gateway
 * path. Refuses with 400 anything that could escape or confuse the tree:
 * `.`/`..` segments (raw or encoded), NUL and other control characters,
 * backslashes, bad percent-encoding or UTF-8, a raw `#`, over-long paths or names.
 * Doubled slashes are folded.
 */
export function decodePath(raw: string): DavPath {
  if (!raw.startsWith('/')) throw badPath('Path must be absolute')
  if (raw.includes('#')) throw badPath('A URL fragment is not part of a path')
  const names: string[] = []
  for (const segment of raw.split('/')) {
    if (segment === '') continue
    let name: string
    try {
      // NFC, as Nextcloud stores names: a Mac's NFD upload and an NFC lookup meet.
      name = decodeURIComponent(segment).normalize('NFC')
    } catch {
      throw badPath('Path has bad percent-encoding')
    }
    if (name === '.' || name === '..') throw badPath('Path may not contain "." or ".." segments')
    if (/[\u0000-\u001f\u007f\\/]/.test(name)) throw badPath('Path segment has a control character, slash or backslash')
    if (Buffer.byteLength(name) > MAX_NAME_BYTES) throw badPath(`A name may be at most ${MAX_NAME_BYTES} bytes`)
    names.push(name)
  }
  const path = '/' + names.join('/')
  if (Buffer.byteLength(path) > MAX_PATH_BYTES) throw badPath(`A path may be at most ${MAX_PATH_BYTES} bytes`)
  return { path, slash: raw.endsWith('/') && path !== '/' }
}

/** The request's own path, relative to where the WebDAV handler is mounted. */
export function requestPath(req: Request): DavPath {
  // A proxy-style absolute-form target (`PROPFIND http://host/x`) names the same path.
  const url = req.originalUrl.replace(/^https?:\/\/[^/?#]*/i, '') || '/'
  const q = url.indexOf('?')
  const raw = q < 0 ? url : url.slice(0, q)
  return decodePath(stripMount(req, raw) ?? raw)
}

function stripMount(req: Request, raw: string): string | undefined {
  const base = req.baseUrl
  if (!base) return raw
  if (raw === base) return '/'
  return raw.startsWith(base + '/') ? raw.slice(base.length) : undefined
}

/**
 * Resolves a URL given in a header (Destination, If tags): an absolute URL on
 * this host or an absolute path. Another host is 502 (RFC 4918 §9.8.5: we
 * cannot copy to another server).
 */
export function headerPath(req: Request, value: string): DavPath {
  let raw = value.trim()
  if (/^[a-z][a-z0-9+.-]*:/i.test(raw)) {
    let url: URL
    try {
      url = new URL(raw)
    } catch {
      throw badPath('Not a valid URL')
    }
    if (url.host.toLowerCase() !== String(req.headers.host ?? '').toLowerCase()) {
      throw new DavError(502, 'OTHER_SERVER', 'The destination is on another server')
    }
    // URL() resolves `..` itself; refuse it on the raw text so nothing is silently rewritten.
    const afterHost = raw.slice(raw.indexOf('//') + 2)
    const slash = afterHost.indexOf('/')
    raw = slash < 0 ? '/' : afterHost.slice(slash)
    const cut = raw.search(/[?#]/)
    if (cut >= 0) raw = raw.slice(0, cut)
  }
  const stripped = stripMount(req, raw)
  if (stripped === undefined) throw new DavError(502, 'OTHER_SERVER', 'The destination is outside this WebDAV tree')
  return decodePath(stripped)
}

/** The URL path of a gateway path: each segment percent-encoded, folders with a trailing slash. */
export function hrefOf(req: Request, path: string, isDir: boolean): string {
  const encoded =
    path === '/'
      ? ''
      : path
          .split('/')
          .map((s) => encodeURIComponent(s))
          .join('/')
  const href = req.baseUrl + encoded
  return isDir ? href + '/' : href || '/'
}

/** `path` itself and every folder above it, nearest first. */
export function selfAndAncestors(path: string): string[] {
  const out = [path]
  let p = path
  while (p !== '/') {
    p = p.slice(0, p.lastIndexOf('/')) || '/'
    out.push(p)
  }
  return out
}

/** True when `path` is `root` or below it. */
export const isWithin = (path: string, root: string) => root === '/' || path === root || path.startsWith(root + '/')
