import { createHash } from 'node:crypto'

/**
 * Whether an `If-None-Match` header names `etag` (RFC 9110 §13.1.2, weak
 * comparison: `W/` on either side is ignored, `*` names any). Only answers
 * that are reads use it, whatever their method: a match is a 304 with no body.
 */
export function namesEtag(header: string | string[] | undefined, etag: string): boolean {
  if (!header) return false
  const bare = etag.replace(/^W\//, '')
  return (Array.isArray(header) ? header.join(',') : header).split(',').some((tag) => {
    const t = tag.trim()
    return t === '*' || t.replace(/^W\//, '') === bare
  })
}

/** A short, quoted strong tag of an answer made of `parts` (SHA-256, 22 base64url characters). */
export const etagOf = (...parts: string[]) => `"${createHash('sha256').update(parts.join('\0')).digest('base64url').slice(0, 22)}"`
