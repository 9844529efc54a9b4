/**
 * The base of every part's error type. A part subclasses it once (GatewayError,
 * BridgeError) and maps it to its own envelope in one error handler.
 * `code` is stable and machine-readable; tests check it, not the message.
 */
export class HttpError extends Error {
  readonly status: number
  readonly code: string
  readonly headers: Record<string, string>

  constructor(status: number, code: string, message: string, headers: Record<string, string> = {}) {
    super(message)
    this.name = new.target.name
    this.status = status
    this.code = code
    this.headers = headers
  }
}

/**
 * Turns what body-parser and friends throw (they carry `status`/`type`) into a
 * clear 4xx; anything else is an internal error the caller must log.
 */
export function describeParserError(err: unknown): { status: number; code: string; message: string } | undefined {
  if (typeof err !== 'object' || err === null) return undefined
  const e = err as { type?: string; status?: number; limit?: number }
  switch (e.type) {
    case 'entity.too.large':
      return { status: 413, code: 'BODY_TOO_LARGE', message: `Request body is larger than ${e.limit ?? 'the limit of'} bytes` }
    case 'entity.parse.failed':
      return { status: 400, code: 'INVALID_JSON', message: 'Request body is not valid JSON' }
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return { status: 415, code: 'UNSUPPORTED_ENCODING', message: 'Request body encoding is not supported' }
    case 'encoding.invalid':
      return { status: 400, code: 'INVALID_ENCODING', message: 'Request body is not valid UTF-8' }
    case 'request.aborted':
      return { status: 400, code: 'REQUEST_ABORTED', message: 'Request was aborted by the client' }
    case 'entity.verify.failed':
    case 'request.size.invalid':
    case 'stream.encoding.set':
    case 'stream.not.readable':
      return { status: 400, code: 'INVALID_BODY', message: 'Request body could not be read' }
  }
  if (typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
    return { status: e.status, code: 'BAD_REQUEST', message: 'Bad request' }
  }
  return undefined
}
