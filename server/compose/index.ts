import { mkdirSync } from 'node:fs'
import type { Config, Role } from '../shared/config.ts'
import { watchDiskSpace } from '../shared/disk.ts'
import type { Faults } from '../shared/faults.ts'
import type { Logger } from '../shared/logger.ts'
import { announceReady } from '../supervisor.ts'
import type { Part } from './part.ts'
import { ensurePortsFree, stackPorts } from './ports.ts'

const STOP_DEADLINE_MS = 10_000

/**
 * What a process is started with besides its configuration: the file each
 * supervised part is started from, and where a test's gateway stops
 * (test/helpers/crash-entry.ts; `npm start` gives none).
 */
export interface StartOptions {
  entry: string
  faults?: Faults
}

/**
 * Starts what `--role` names with a configuration already loaded: the whole
 * stack under a supervisor that runs `entry` once per part, or one part in
 * this process, stopped by SIGINT/SIGTERM or when its supervisor goes.
 *
 * @example await startRole('gateway', loadConfig(process.env, { role: 'gateway' }), logger, entry)
 */
export async function startRole(role: Role, config: Config, logger: Logger, options: StartOptions): Promise<void> {
  mkdirSync(config.dataDir, { recursive: true })
  // Each process loads only what its role runs: on a loaded machine, loading every part's modules took tens of seconds.
  if (role === 'all') return (await import('./stack.ts')).superviseStack(config, logger, options.entry)

  const disk = role === 'gateway' ? watchDiskSpace({ dir: config.dataDir, warnBelowBytes: config.diskWarnBelowBytes, logger }) : undefined
  let part: Part | undefined
  let stopping = false
  const stop = async (signal: string) => {
    // A stop signal often comes twice (the process group's, then the one npm or the supervisor passes on):
    // the stop under way goes on, its deadline still set.
    if (stopping) return
    stopping = true
    disk?.stop()
    logger.info({ signal }, 'shutting down: finishing in-flight requests')
    // A part that cannot finish stopping (a stuck transfer, a provider that never answers) goes anyway:
    // what it stored is safe (SQLite transactions; half-written files are swept at the next start),
    // and a gateway must free its data folder for the one that replaces it.
    setTimeout(() => {
      logger.warn({ afterMs: STOP_DEADLINE_MS }, 'shutdown took too long: exiting now')
      process.exit(1)
    }, STOP_DEADLINE_MS).unref()
    if (part) {
      await part.server?.close()
      await part.close()
      logger.info({ part: part.name }, 'stopped')
    }
    process.exit(0)
  }
  // Kept for the whole stop: with no listener left, a second signal would end the process
  // on the spot, before its 'stopped' line, its pid file and its database's log are cleared.
  process.on('SIGINT', () => void stop('SIGINT'))
  process.on('SIGTERM', () => void stop('SIGTERM'))
  // Under a supervisor: when it is gone (even killed outright), this part stops too. Its
  // stdout was the supervisor's pipe: writing there now fails, so the part stops silently.
  if (process.connected) {
    process.once('disconnect', () => {
      logger.level = 'silent'
      void stop('supervisor gone')
    })
  }

  // A deal service running alone on the simulated network runs that network in its own process.
  await ensurePortsFree(stackPorts(config).filter((w) => w.part === role || (role === 'service' && w.part === 'network')))
  const ready: Record<string, unknown> = {}
  if (role === 'network') {
    const network = await (await import('./network.ts')).runNetwork(config, logger)
    ready.rpcUrl = network.rpcUrl
    ready.focRpcUrl = network.focRpcUrl
    part = network
  } else if (role === 'service') {
    const service = await (await import('./service.ts')).runService(config, logger)
    ready.rpcUrl = service.rpcUrl
    ready.focRpcUrl = service.focRpcUrl
    part = service
  } else if (role === 'gateway') {
    part = await (await import('./gateway.ts')).runGateway(config, logger, options.faults)
  } else {
    part = await (await import('./app.ts')).runApp(config, logger)
  }
  // Under `--role all`, the supervisor passes this on to the parts started after this one.
  announceReady({ url: part.url, ...ready })
}

/** True when a part did not start because another process holds its data folder, database or port: said plainly, no stack. */
export function isHeldElsewhere(err: unknown): err is Error {
  // By name: the gateway's DataFolderInUse and DatabaseInUse, ports.ts's PortInUse, without loading the gateway to ask.
  return err instanceof Error && ['DataFolderInUse', 'DatabaseInUse', 'PortInUse'].includes(err.name)
}
