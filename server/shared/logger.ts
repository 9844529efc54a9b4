import { pino, type Logger } from 'pino'
import { PinoPretty, prettyFactory } from 'pino-pretty'

export type { Logger }

export type LogFormat = 'pretty' | 'json'

const REDACT = {
  paths: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-api-key"]', 'password', '*.password'],
  censor: '[redacted]',
}

/** `LOG_FORMAT` as given, or pretty lines for a person at a terminal and JSON for everything else. */
export function logFormatFor(given: LogFormat | undefined, isTTY = Boolean(process.stdout.isTTY)): LogFormat {
  return given ?? (isTTY ? 'pretty' : 'json')
}

// One line per event, the part first: what a person scans in a terminal.
const PRETTY_OPTIONS = {
  colorize: Boolean(process.stdout.isTTY),
  translateTime: 'SYS:HH:MM:ss',
  ignore: 'pid,hostname,part',
  singleLine: true,
  messageFormat: '{if part}{part}: {end}{msg}',
}

/** One pino logger per process; parts take a child (`logger.child({ part: 'gateway' })`). */
export function createLogger(level: string = 'info', format: LogFormat = 'json'): Logger {
  const options = {
    level,
    base: { pid: process.pid },
    // Never write credentials to the log, whatever a handler passes in.
    redact: REDACT,
  }
  // Written at once, not buffered: pino flushes a buffer at exit in a loop that never ends when
  // the reader has gone (a supervised part whose supervisor was killed), so such a part hung for good.
  return format === 'pretty'
    ? pino(options, PinoPretty({ ...PRETTY_OPTIONS, sync: true }))
    : pino(options, pino.destination({ dest: 1, sync: true }))
}

/** Turns a JSON log line (a supervised part's) into pino-pretty's line; anything else passes as is. */
export function createLinePrettifier(): (line: string) => string {
  const pretty = prettyFactory(PRETTY_OPTIONS)
  return (line) => {
    if (!line.startsWith('{')) return line + '\n'
    try {
      return pretty(JSON.parse(line) as object)
    } catch {
      return line + '\n'
    }
  }
}
