import type { Response } from 'express'
import { GatewayError } from '../errors.ts'
import { GW, dav, el, toXmlDocument, type XmlElement } from './xml.ts'

/**
 * A WebDAV failure. On the wire (see `sendDavError`) every error is a small
 * RFC 4918 error document, for example a 423:
 *
 *   <d:error xmlns:d="DAV:" xmlns:g="https://filecoin-gateway/ns">
 *     <d:lock-token-submitted><d:href>/a/b</d:href></d:lock-token-submitted>
 *     <g:code>LOCKED</g:code><g:message>Resource is locked</g:message>
 *   </d:error>
 *
 * `condition` is the RFC's precondition element, when there is one; `g:code`
 * is our stable machine-readable code.
 */
export class DavError extends GatewayError {
  readonly condition?: XmlElement

  constructor(status: number, code: string, message: string, condition?: XmlElement, headers: Record<string, string> = {}) {
    super(status, code, message, headers)
    this.condition = condition
  }
}

export const badRequest = (message: string) => new DavError(400, 'BAD_REQUEST', message)
export const badXml = (message: string) => new DavError(400, 'INVALID_XML', message)
export const badPath = (message: string) => new DavError(400, 'INVALID_PATH', message)
export const forbidden = (code: string, message: string, condition?: XmlElement) => new DavError(403, code, message, condition)
export const notFound = () => new DavError(404, 'NOT_FOUND', 'No such file or folder')
export const conflict = (message: string) => new DavError(409, 'CONFLICT', message)
export const preconditionFailed = (message = 'Precondition failed') => new DavError(412, 'PRECONDITION_FAILED', message)
export const tooLarge = (message: string) => new DavError(413, 'BODY_TOO_LARGE', message)
/** 507 for a full disk: a write stored nothing; a read (which should need no room) says so in its own words. */
export const insufficientStorage = (write = true) =>
  new DavError(
    507,
    'INSUFFICIENT_STORAGE',
    write
      ? "The gateway's disk is full; nothing was stored. Try again once space is freed."
      : "The gateway's disk is full, and this request needed room on it; nothing was changed. Try again once space is freed.",
    undefined,
    { 'Retry-After': '60' },
  )
export const locked = (roots: string[], condition = 'lock-token-submitted') =>
  new DavError(
    423,
    'LOCKED',
    'Resource is locked',
    dav(
      condition,
      roots.map((h) => dav('href', [h])),
    ),
  )

/** Writes any error as the document above; unknown errors are logged by the caller first. */
export function sendDavError(res: Response, err: DavError | GatewayError, head: boolean): void {
  const body = toXmlDocument(
    dav('error', [
      ...(err instanceof DavError && err.condition ? [err.condition] : []),
      el(GW, 'code', [err.code]),
      el(GW, 'message', [err.message]),
    ]),
  )
  res.status(err.status).set(err.headers).set('Content-Type', 'application/xml; charset=utf-8')
  // 304 carries no body, HEAD never does.
  if (head || err.status === 304) res.end()
  else res.end(body)
}
