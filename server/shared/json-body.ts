import type { IncomingMessage } from 'node:http'

export interface JsonBodyOptions {
  /** Largest body in bytes. */
  limit: number
}

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false })

function parserError(status: number, type: string, message: string, extra: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(message), { status, type, expose: true, ...extra })
}

/** True for `application/json` with no charset or a UTF-8 one (RFC 8259); throws 415 for another charset. */
export function isJsonContentType(header: string | undefined): boolean {
  if (!header) return false
  const semicolon = header.indexOf(';')
  const type = (semicolon === -1 ? header : header.slice(0, semicolon)).trim().toLowerCase()
  if (type !== 'application/json') return false
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(header)?.[1]?.toLowerCase()
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw parserError(415, 'charset.unsupported', `unsupported charset "${charset.toUpperCase()}"`, { charset })
  }
  return true
}

/**
 * Reads and parses a JSON request body, for hot routes where body-parser's
 * generality (inflation, any charset, type-is) costs more than the route
 * itself. It fails with body-parser's error contract (`status`, `type`,
 * `limit`), so `describeParserError` maps its failures like body-parser's.
 *
 * Identity encoding only: a compressed body is refused with 415, not
 * inflated, since no Nextcloud client sends one. Invalid UTF-8 is refused
 * (400), not silently replaced. The caller has checked the content type
 * (`isJsonContentType`). An empty body reads as `undefined`.
 */
export function readJsonBody(req: IncomingMessage, opts: JsonBodyOptions): Promise<unknown> {
  const encoding = req.headers['content-encoding']
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') {
    return Promise.reject(parserError(415, 'encoding.unsupported', `unsupported content encoding "${encoding}"`, { encoding }))
  }
  const declared = req.headers['content-length'] === undefined ? undefined : Number(req.headers['content-length'])
  if (declared !== undefined && declared > opts.limit) {
    return Promise.reject(parserError(413, 'entity.too.large', 'request entity too large', { limit: opts.limit, length: declared }))
  }

  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let received = 0
    const cleanup = () => {
      req.off('data', onData)
      req.off('end', onEnd)
      req.off('aborted', onAborted)
      req.off('error', onError)
    }
    const fail = (err: Error) => {
      cleanup()
      // Stop buffering what is left; the answer goes out and the connection may close.
      req.resume()
      reject(err)
    }
    const onData = (chunk: Buffer) => {
      received += chunk.length
      if (received > opts.limit)
        return fail(parserError(413, 'entity.too.large', 'request entity too large', { limit: opts.limit, received }))
      chunks.push(chunk)
    }
    const onEnd = () => {
      cleanup()
      if (declared !== undefined && received !== declared) {
        return reject(
          parserError(400, 'request.size.invalid', 'request size did not match content length', { expected: declared, received }),
        )
      }
      if (received === 0) return resolve(undefined)
      let text: string
      try {
        text = decoder.decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received))
      } catch {
        return reject(parserError(400, 'encoding.invalid', 'request body is not valid UTF-8'))
      }
      try {
        resolve(JSON.parse(text))
      } catch {
        reject(parserError(400, 'entity.parse.failed', 'request body is not valid JSON'))
      }
    }
    const onAborted = () => fail(parserError(400, 'request.aborted', 'request aborted'))
    const onError = (err: Error) => fail(parserError(400, 'request.aborted', err.message))
    req.on('data', onData)
    req.on('end', onEnd)
    req.on('aborted', onAborted)
    req.on('error', onError)
  })
}
