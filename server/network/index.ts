import type { ServiceConfig } from '../shared/config.ts'
import { networkClock, type NetworkClock } from '../shared/epochs.ts'
import { createLotusNetwork } from './lotus/index.ts'
import { createJsonRpc } from './lotus/json-rpc.ts'
import { nodeClock } from './lotus/node-clock.ts'
import { createSimnet, type Simnet } from '../simulation/simnet/index.ts'
import type { NetworkPort } from './types.ts'

/**
 * The simulated network by default; a Lotus/Forest node when LOTUS_URL is set.
 * On a devnet `deps.clock` is the one read from its node (`devnetClock`).
 */
export function createNetwork(
  config: ServiceConfig,
  deps: { now?: () => number; fetch?: typeof fetch; clock?: NetworkClock } = {},
): NetworkPort {
  if (config.lotusUrl) {
    if (config.network === 'devnet' && !deps.clock) throw new Error('NETWORK=devnet: read the clock from the node first (devnetClock)')
    const clock = deps.clock ?? networkClock(config.network === 'simnet' || config.network === 'devnet' ? 'mainnet' : config.network)
    return createLotusNetwork({ url: config.lotusUrl, token: config.lotusToken, clock, fetch: deps.fetch })
  }
  return createSimnet({
    seed: config.simnetSeed,
    speed: config.simnetSpeed,
    genesis: config.simnetGenesis,
    nv29Epoch: config.simnetNv29Epoch,
    now: deps.now,
  })
}

/**
 * The simulated network as the deal service beside it sees it: the chain
 * through the Lotus JSON-RPC adapter at `rpcUrl` (the code path of a real
 * network), and the provider directory (who the providers are and their full
 * terms: capacity, busy days, accepted clients and deal types, which no ask
 * carries) from the simulation, as a real deployment gets it from its
 * operator's policy or a provider directory service.
 */
export function simnetOverRpc(simnet: Simnet, rpcUrl: string): NetworkPort {
  const chain = createLotusNetwork({ url: rpcUrl, clock: simnet.clock, timeoutMs: 10_000 })
  return {
    ...chain,
    kind: 'simnet',
    listProviders: () => simnet.listProviders(),
    providerTerms: (providerId) => simnet.providerTerms(providerId),
  }
}

/** The clock of the devnet whose node answers at `url` (LOTUS_URL), read once at start. */
export function devnetClock(o: { url: string; token?: string; fetch?: typeof fetch }): Promise<NetworkClock> {
  return nodeClock(createJsonRpc({ url: o.url, token: o.token, fetch: o.fetch, timeoutMs: 10_000 }))
}

// The wallet, which the composition (server/compose) opens for the gateway's key.
export { openKeystore } from './wallet/keystore.ts'
