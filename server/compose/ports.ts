import { createServer } from 'node:net'
import type { Config } from '../shared/config.ts'

/** A port the stack is configured to listen on that another process already holds. */
export class PortInUse extends Error {
  override name = 'PortInUse'
}

interface WantedPort {
  part: 'service' | 'gateway' | 'app' | 'network'
  /** The setting that chose it, as a person would change it. */
  setting: string
  host: string
  port: number
}

/** The fixed ports the stack's parts will listen on (0 means any free port: nothing to check). */
export function stackPorts(config: Config): WantedPort[] {
  const { bridge, gateway, service, chain } = config
  const wanted: WantedPort[] = [
    { part: 'service', setting: 'SERVICE_PORT', host: service.host, port: service.port },
    { part: 'gateway', setting: 'GATEWAY_PORT', host: gateway.host, port: gateway.port },
    { part: 'app', setting: 'PORT', host: bridge.host, port: bridge.port },
  ]
  // The simulated network (and its Onchain Cloud) runs when no real chain is configured: in a process of its own
  // under `npm start`, in the deal service's when that runs alone.
  if (chain.service === 'simnet') {
    wanted.push({ part: 'network', setting: 'SIMNET_RPC_PORT', host: service.host, port: service.simnetRpcPort ?? 1234 })
    if (service.simfocProviders !== 0) {
      wanted.push({ part: 'network', setting: 'SIMFOC_RPC_PORT', host: service.host, port: service.simfocRpcPort ?? 1235 })
    }
  }
  return wanted.filter((w) => w.port !== 0)
}

/** The ports the configuration names (not 0): ports the simulated network never takes for what it places itself. */
export function configuredPorts(config: Config): number[] {
  return stackPorts(config).map((w) => w.port)
}

/**
 * Fails at once, naming the setting, when a port the stack needs is taken:
 * found only when the part that binds it starts, it came after the simulated
 * network had started, as a listen error's stack and a restart.
 */
export async function ensurePortsFree(wanted: WantedPort[]): Promise<void> {
  for (const w of wanted) {
    const free = await new Promise<boolean>((resolve) => {
      const probe = createServer()
      probe.once('error', () => resolve(false))
      probe.listen({ host: w.host, port: w.port, exclusive: true }, () => probe.close(() => resolve(true)))
    })
    if (!free) throw portInUse(w)
  }
}

export const portInUse = (w: WantedPort) =>
  new PortInUse(
    `${w.setting} ${w.port} is in use on ${w.host}: another process listens there. Stop it, or set ${w.setting} to a free port.`,
  )
