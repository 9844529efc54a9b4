import { pino, type Logger } from 'pino'

export type { Logger }

/** One pino logger per process; parts take a child (`logger.child({ part: 'gateway' })`). */
export function createLogger(level: string = 'info'): Logger {
  return pino({
    level,
    base: { pid: process.pid },
    // Never write credentials to the log, whatever a handler passes in.
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-api-key"]', 'password', '*.password'],
      censor: '[redacted]',
    },
  })
}
