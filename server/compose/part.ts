import type { Config } from '../shared/config.ts'
import { createConnectionBudget, type ConnectionBudget } from '../shared/connection-cap.ts'
import type { RunningServer, ServerOptions } from '../shared/http.ts'
import type { Logger } from '../shared/logger.ts'

/** One started part: where it answers, its HTTP server and what else it holds open. */
export interface Part {
  name: string
  /** What it announces to its supervisor. */
  url: string
  /** Stopped first, letting in-flight requests finish; the simulated network's `close` stops its many servers itself. */
  server?: RunningServer
  close(): Promise<void>
}

let connections: ConnectionBudget | undefined

/** Every part's connection rules; one connection budget for the whole process, whose descriptors they share. */
export function serverOptions(config: Config, logger: Logger): ServerOptions {
  const { maxConnections, maxConnectionsPerAddress, ...limits } = config.http
  connections ??= createConnectionBudget({ maxConnections, maxPerAddress: maxConnectionsPerAddress, logger })
  return { ...limits, connections }
}
