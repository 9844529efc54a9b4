import { startServer, type ServerOptions } from '../../shared/http.ts'
import type { Logger } from '../../shared/logger.ts'
import { createFaults, type ChainFaultPlan, type FaultOptions } from './faults.ts'
import type { Simnet } from './index.ts'
import { startProviderHosts, type ProviderHosts } from './provider-hosts.ts'
import { SIMNET_RPC_PATH, simnetRpcListener } from './rpc-server.ts'
import { createSimulatedProviders, type SimulatedProviders } from './sim-providers.ts'

/** The simulated network as real peers see it: a Lotus JSON-RPC URL and providers on libp2p and HTTP. */
export interface SimulatedNetwork {
  /** Where its chain answers Lotus JSON-RPC (the gateway API's methods). */
  rpcUrl: string
  providers: SimulatedProviders
  hosts: ProviderHosts
  /** The faults it injects (none unless `faults.rate` > 0), and how many struck so far. */
  faults: ChainFaultPlan
  /** Stops the providers, their hosts and the RPC server (not `simnet` itself). */
  close(): Promise<void>
}

export interface SimulatedNetworkOptions {
  simnet: Simnet
  /** Where the providers keep the pieces they stored (`<dir>/<providerId>/`). */
  dir: string
  seed: string
  host?: string
  /** Port of the chain's JSON-RPC; 0 (default) takes a free one. */
  rpcPort?: number
  /** Connection rules of its HTTP ports (the chain's RPC, the providers' retrievals), as every part's. */
  http?: ServerOptions
  /** Longest a provider's CAR transfer may take. */
  transferTimeoutMs?: number
  /**
   * Seeded faults (SIMNET_FAULT_RATE): that share of chain calls, provider streams and CAR
   * downloads fail or stall (up to `maxStallMs`, default 3 s). Off by default.
   */
  faults?: { rate: number; maxStallMs?: number; hangMs?: number; onFault?: FaultOptions['onFault'] }
  /** Where the providers' libp2p hosts tell of connections they refused or cut. */
  logger?: Pick<Logger, 'warn'>
}

/**
 * The one way the simulated network is put on loopback, for `npm start`, the
 * deal tests and the bench alike: its chain served as Lotus JSON-RPC, each
 * provider a libp2p host (TCP for Boost-like, WebSocket for Curio-like) with
 * its HTTP retrieval, published in its miner info. Whoever uses it reaches it
 * only through those, as it would a real network.
 */
export async function startSimulatedNetwork(o: SimulatedNetworkOptions): Promise<SimulatedNetwork> {
  const host = o.host ?? '127.0.0.1'
  // A plan of its own even without faults: a test may still hold its chain rate-limited for a while.
  const faults = createFaults({ seed: o.seed, rate: 0, ...o.faults })
  const rpc = await startServer(simnetRpcListener(o.simnet, { faults }), o.rpcPort ?? 0, host, o.http)
  const providers = createSimulatedProviders({ simnet: o.simnet, dir: o.dir, transferTimeoutMs: o.transferTimeoutMs, faults })
  let hosts: ProviderHosts
  try {
    hosts = await startProviderHosts({ simnet: o.simnet, providers, seed: o.seed, host, faults, http: o.http, logger: o.logger })
  } catch (err) {
    await rpc.close()
    throw err
  }
  return {
    rpcUrl: `${rpc.url}${SIMNET_RPC_PATH}`,
    providers,
    hosts,
    faults,
    async close() {
      await providers.close()
      await hosts.close()
      await rpc.close()
    },
  }
}
