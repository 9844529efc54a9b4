import type { NetworkName } from './contracts/network.ts'

/** Filecoin time: one epoch every 30 s since the network's genesis. */
export const EPOCH_SECONDS = 30
export const EPOCHS_PER_DAY = 2880
/** Deal duration bounds of the market actor: 180 to 1278 days. */
export const MIN_DEAL_DAYS = 180
export const MAX_DEAL_DAYS = 1278

/** `devnet`'s genesis and block time are read from the node at start (server/network/lotus/node-clock.ts), never constants. */
export type { NetworkName }

/** The networks whose clock is known without asking a node. */
export type KnownClockNetwork = Exclude<NetworkName, 'devnet'>

/** Genesis times (unix seconds) of the real networks. */
export const GENESIS: Record<'mainnet' | 'calibration', number> = {
  mainnet: 1598306400,
  calibration: 1667326380,
}

/**
 * The simulated network's default genesis (2024-01-01T00:00:00Z). It is our own
 * network, so any fixed instant would do; a fixed one keeps epochs comparable
 * across restarts.
 */
export const SIMNET_DEFAULT_GENESIS = 1704067200

/**
 * How a network's epochs map to wall-clock time: epoch e starts at
 * `genesis + e · epochSeconds` (unix seconds). Real networks: their genesis
 * and 30 s. A sped-up simulated network is the same line with shorter epochs
 * and the genesis moved so that the head is the epoch running now: one
 * clock for its chain head, the deal service's converters and the tab's dates.
 */
export interface NetworkClock {
  name: NetworkName
  genesis: number
  epochSeconds: number
}

/**
 * A chain's clock alone, without a network's name: what the Onchain Cloud's
 * FEVM chain tells of itself from its blocks (server/network/foc/chain-clock.ts),
 * which need not be the deal market's chain.
 */
export type ChainClock = Pick<NetworkClock, 'genesis' | 'epochSeconds'>

export function networkClock(name: KnownClockNetwork, simnetGenesis = SIMNET_DEFAULT_GENESIS): NetworkClock {
  return { name, genesis: name === 'simnet' ? simnetGenesis : GENESIS[name], epochSeconds: EPOCH_SECONDS }
}

/**
 * The simulated network run `speed` times faster than the wall clock from
 * `anchorSeconds` on: at that instant its head is the epoch a real-time
 * network with `genesis` would be at, then it runs `speed` epochs per 30 s.
 */
export function spedUpClock(genesis: number, speed: number, anchorSeconds: number): NetworkClock {
  return { name: 'simnet', genesis: anchorSeconds - (anchorSeconds - genesis) / speed, epochSeconds: EPOCH_SECONDS / speed }
}

/** Unix seconds at the start of `epoch` (whole seconds). */
export function epochToTimestamp(clock: ChainClock, epoch: number): number {
  return Math.floor(clock.genesis + epoch * clock.epochSeconds)
}

/** The epoch running at unix second `seconds` (floor), or -1 before genesis. */
export function timestampToEpoch(clock: NetworkClock, seconds: number): number {
  if (seconds < clock.genesis) return -1
  // A small bias (a millionth of an epoch) keeps an epoch's own start in that epoch despite binary
  // fractions: a sped-up clock's genesis and 0.1 s epochs are not exact in floating point.
  return Math.floor((seconds - clock.genesis) / clock.epochSeconds + 1e-6)
}

/** Simulated time per minute of wall-clock time, in words ("5 hours"); undefined in real time. */
export function speedInWords(clock: NetworkClock): string | undefined {
  const speed = EPOCH_SECONDS / clock.epochSeconds
  if (speed <= 1.0001) return undefined
  const minutes = speed
  const [value, unit] = minutes < 60 ? [minutes, 'minute'] : minutes < 2 * 1440 ? [minutes / 60, 'hour'] : [minutes / 1440, 'day']
  const n = Number(value.toPrecision(2))
  return `1 minute ≈ ${n} ${unit}${n === 1 ? '' : 's'}`
}
