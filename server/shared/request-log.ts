import type { Request, RequestHandler, Response } from 'express'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { createLineLimit, leftOutField } from './line-limit.ts'
import type { Logger } from './logger.ts'

/** Lines about cut requests, for the whole process. */
const cutLines = createLineLimit({ perWindow: 20 })

/** The URL the client asked for: Express rewrites `req.url` inside mounted routers, not `originalUrl`. */
export const requestedUrl = (req: IncomingMessage): string => (req as Partial<Request>).originalUrl ?? req.url ?? '/'

/** Query parameters whose values are secrets: keys, tokens, passwords, signatures (`apiKey`, `access_token`, `X-Amz-Signature`, …). */
const SECRET_PARAMETER = /key|token|secret|passw|pwd|auth|sig|session|cred|code/i

/**
 * `url` with the values of secret-looking query parameters replaced by
 * `[redacted]`, for logs: a client that puts `?apiKey=…` in a URL must not
 * have it written to disk. The path and other parameters stay as sent.
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?')
  if (q < 0) return url
  const query = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=')
      const name = eq < 0 ? pair : pair.slice(0, eq)
      let decoded = name
      try {
        decoded = decodeURIComponent(name.replace(/\+/g, ' '))
      } catch {
        // A malformed escape: judge the name as sent.
      }
      return eq >= 0 && SECRET_PARAMETER.test(decoded) ? `${name}=[redacted]` : pair
    })
  return `${url.slice(0, q)}?${query.join('&')}`
}

/** The requested URL as logs may show it. */
export const loggedUrl = (req: IncomingMessage): string => redactUrl(requestedUrl(req))

/**
 * 404 (rclone and the desktop client look a path up before creating it), 405
 * (`MKCOL` of a folder that is there: every sync client does it) and 412 (a
 * conditional write that lost a race, retried by the client).
 */
const ROUTINE_REFUSALS = new Set([404, 405, 412])

const levelOf = (status: number, finished: boolean) =>
  status >= 500 ? 'error' : !finished ? 'warn' : status >= 400 && !ROUTINE_REFUSALS.has(status) ? 'info' : 'debug'

/**
 * One log line per finished request: method, URL, status, time, plus what
 * `fields` adds (the user, a request id) — never headers, which carry
 * credentials. Cheaper than pino-http (no child logger per request), which
 * matters on the bridge's hot path.
 *
 * Answered requests are `debug`: an open Files tab polls its record every
 * 10 s, and at `info` its lines buried everything else. So are the refusals
 * WebDAV clients meet in normal use (ROUTINE_REFUSALS); other refusals (4xx)
 * stay `info`, aborted requests `warn`, server errors `error`.
 */
export function logWhenDone(logger: Logger, req: IncomingMessage, res: ServerResponse, fields: () => Record<string, unknown>): void {
  const started = performance.now()
  // Node sets `req.socket` to null once a body reader fails half-way: read it now, not at 'close'.
  const remoteAddress = req.socket?.remoteAddress
  res.once('close', () => {
    const status = res.statusCode
    const level = levelOf(status, res.writableFinished)
    if (!logger.isLevelEnabled(level)) return
    const write = (leftOut: number) =>
      logger[level](
        {
          req: { method: req.method, url: loggedUrl(req), remoteAddress },
          res: { statusCode: status },
          ...fields(),
          responseTime: Math.round(performance.now() - started),
          ...leftOutField(leftOut),
        },
        res.writableFinished ? 'request completed' : 'request aborted',
      )
    // A cut connection (the client left, or its body was too slow: 408) is a line, but a flood of them is a few lines and a count.
    if (!res.writableFinished || status === 408) cutLines('cut', write)
    else write(0)
  })
}

/** `logWhenDone` as Express middleware. */
export function requestLogger(
  logger: Logger,
  fields: (req: Request, res: Response) => Record<string, unknown> = () => ({}),
): RequestHandler {
  return (req: Request, res: Response, next) => {
    logWhenDone(logger, req, res, () => fields(req, res))
    next()
  }
}
