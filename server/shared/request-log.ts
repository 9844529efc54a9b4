import type { Request, RequestHandler, Response } from 'express'
import type { Logger } from './logger.ts'

/**
 * One log line per finished request: method, URL, status, time, plus what
 * `fields` adds (the user, a request id) — never headers, which carry
 * credentials. Cheaper than pino-http (no child logger per request), which
 * matters on the bridge's hot path.
 */
export function requestLogger(logger: Logger, fields: (req: Request, res: Response) => Record<string, unknown> = () => ({})): RequestHandler {
  return (req: Request, res: Response, next) => {
    const started = performance.now()
    res.once('close', () => {
      const status = res.statusCode
      const level = status >= 500 ? 'error' : !res.writableFinished ? 'warn' : 'info'
      if (!logger.isLevelEnabled(level)) return
      logger[level]({
        req: { method: req.method, url: req.originalUrl, remoteAddress: req.socket.remoteAddress },
        res: { statusCode: status },
        ...fields(req, res),
        responseTime: Math.round(performance.now() - started),
      }, res.writableFinished ? 'request completed' : 'request aborted')
    })
    next()
  }
}
