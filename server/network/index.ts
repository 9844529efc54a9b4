import type { ServiceConfig } from '../shared/config.ts'
import { networkClock } from '../shared/epochs.ts'
import { createLotusNetwork } from './lotus/index.ts'
import { createSimnet } from './simnet/index.ts'
import type { NetworkPort } from './types.ts'

/** The simulated network by default; a Lotus/Forest node when LOTUS_URL is set. */
export function createNetwork(config: ServiceConfig, deps: { now?: () => number; fetch?: typeof fetch } = {}): NetworkPort {
  if (config.lotusUrl) {
    const clock = networkClock(config.network === 'simnet' ? 'mainnet' : config.network)
    return createLotusNetwork({ url: config.lotusUrl, token: config.lotusToken, clock, fetch: deps.fetch })
  }
  return createSimnet({ seed: config.simnetSeed, speed: config.simnetSpeed, genesis: config.simnetGenesis, now: deps.now })
}
