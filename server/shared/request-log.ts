import type { Request, RequestHandler, Response } from 'express'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Logger } from './logger.ts'

/** The URL the client asked for: Express rewrites `req.url` inside mounted routers, not `originalUrl`. */
export const requestedUrl = (req: IncomingMessage): string => (req as Partial<Request>).originalUrl ?? req.url ?? '/'

/**
 * One log line per finished request: method, URL, status, time, plus what
 * `fields` adds (the user, a request id) — never headers, which carry
 * credentials. Cheaper than pino-http (no child logger per request), which
 * matters on the bridge's hot path.
 */
export function logWhenDone(logger: Logger, req: IncomingMessage, res: ServerResponse, fields: () => Record<string, unknown>): void {
  const started = performance.now()
  // Node sets `req.socket` to null once a body reader fails half-way: read it now, not at 'close'.
  const remoteAddress = req.socket?.remoteAddress
  res.once('close', () => {
    const status = res.statusCode
    const level = status >= 500 ? 'error' : !res.writableFinished ? 'warn' : 'info'
    if (!logger.isLevelEnabled(level)) return
    logger[level]({
      req: { method: req.method, url: requestedUrl(req), remoteAddress },
      res: { statusCode: status },
      ...fields(),
      responseTime: Math.round(performance.now() - started),
    }, res.writableFinished ? 'request completed' : 'request aborted')
  })
}

/** `logWhenDone` as Express middleware. */
export function requestLogger(logger: Logger, fields: (req: Request, res: Response) => Record<string, unknown> = () => ({})): RequestHandler {
  return (req: Request, res: Response, next) => {
    logWhenDone(logger, req, res, () => fields(req, res))
    next()
  }
}
