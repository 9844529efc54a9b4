import type { ServiceConfig } from '../shared/config.ts'
import { networkClock, type NetworkClock } from '../shared/epochs.ts'
import { createLotusNetwork, lotusMiners, lotusNetworkParams } from './lotus/index.ts'
import { createJsonRpc } from './lotus/json-rpc.ts'
import { nodeClock } from './lotus/node-clock.ts'
import type { NetworkPort } from './types.ts'

/**
 * The chain of the Lotus/Forest node at LOTUS_URL, on the configured
 * network's clock; on a devnet `deps.clock` is the one read from its node
 * (`devnetClock`).
 */
export function lotusNetworkFor(config: ServiceConfig, deps: { fetch?: typeof fetch; clock?: NetworkClock } = {}): NetworkPort {
  if (!config.lotusUrl) throw new Error('no Lotus node to read the chain from: set LOTUS_URL')
  if (config.network === 'devnet' && !deps.clock) throw new Error('NETWORK=devnet: read the clock from the node first (devnetClock)')
  const clock = deps.clock ?? networkClock(config.network === 'simnet' || config.network === 'devnet' ? 'mainnet' : config.network)
  return createLotusNetwork({ url: config.lotusUrl, token: config.lotusToken, clock, fetch: deps.fetch })
}

/** The clock of the devnet whose node answers at `url` (LOTUS_URL), read once at start. */
export function devnetClock(o: { url: string; token?: string; fetch?: typeof fetch }): Promise<NetworkClock> {
  return nodeClock(createJsonRpc({ url: o.url, token: o.token, fetch: o.fetch, timeoutMs: 10_000 }))
}

/** The network name the node at `url` reports (StateGetNetworkParams' NetworkName, its StateNetworkName). */
export async function nodeNetworkName(o: { url: string; token?: string; fetch?: typeof fetch }): Promise<string> {
  return (await lotusNetworkParams(createJsonRpc({ url: o.url, token: o.token, fetch: o.fetch, timeoutMs: 10_000 }))).networkName
}

export { networkNameMismatch } from './lotus/network-name.ts'

/** A devnet's miner actors (StateListMiners), the providers its deals can go to. */
export function devnetMiners(o: { url: string; token?: string; fetch?: typeof fetch }): Promise<string[]> {
  return lotusMiners(createJsonRpc({ url: o.url, token: o.token, fetch: o.fetch, timeoutMs: 10_000 }))
}

// The wallet, which the composition (server/compose) opens for the gateway's key.
export { openKeystore } from './wallet/keystore.ts'
