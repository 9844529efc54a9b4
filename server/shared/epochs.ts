/** Filecoin time: one epoch every 30 s since the network's genesis. */
export const EPOCH_SECONDS = 30
export const EPOCHS_PER_DAY = 2880

export type NetworkName = 'simnet' | 'mainnet' | 'calibration'

/** Genesis times (unix seconds) of the real networks. */
export const GENESIS: Record<Exclude<NetworkName, 'simnet'>, number> = {
  mainnet: 1598306400,
  calibration: 1667326380,
}

/**
 * The simulated network's default genesis (2024-01-01T00:00:00Z). It is our own
 * network, so any fixed instant would do; a fixed one keeps epochs comparable
 * across restarts.
 */
export const SIMNET_DEFAULT_GENESIS = 1704067200

export interface NetworkClock {
  name: NetworkName
  genesis: number
}

export function networkClock(name: NetworkName, simnetGenesis = SIMNET_DEFAULT_GENESIS): NetworkClock {
  return { name, genesis: name === 'simnet' ? simnetGenesis : GENESIS[name] }
}

/** Unix seconds at the start of `epoch`. */
export function epochToTimestamp(clock: NetworkClock, epoch: number): number {
  return clock.genesis + epoch * EPOCH_SECONDS
}

/** The epoch running at unix second `seconds` (floor), or -1 before genesis. */
export function timestampToEpoch(clock: NetworkClock, seconds: number): number {
  if (seconds < clock.genesis) return -1
  return Math.floor((seconds - clock.genesis) / EPOCH_SECONDS)
}
