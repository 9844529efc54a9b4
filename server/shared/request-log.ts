import type { Request, RequestHandler, Response } from 'express'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Logger } from './logger.ts'

/**
 * One log line per finished request: method, URL, status, time, plus what
 * `fields` adds (the user, a request id) — never headers, which carry
 * credentials. Cheaper than pino-http (no child logger per request), which
 * matters on the bridge's hot path.
 */
export function logWhenDone(logger: Logger, req: IncomingMessage, res: ServerResponse, fields: () => Record<string, unknown>): void {
  const started = performance.now()
  res.once('close', () => {
    const status = res.statusCode
    const level = status >= 500 ? 'error' : !res.writableFinished ? 'warn' : 'info'
    if (!logger.isLevelEnabled(level)) return
    logger[level]({
      // Express rewrites req.url inside mounted routers; originalUrl is what the client asked.
      req: { method: req.method, url: (req as Partial<Request>).originalUrl ?? req.url, remoteAddress: req.socket.remoteAddress },
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
