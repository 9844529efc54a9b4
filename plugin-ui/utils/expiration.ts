/**
 * What the tab says about when storage ends, beyond the file's expiration
 * date: how long that is on a sped-up simulated network's own clock, when
 * copies end at different times, and when warm copies' funding runs short.
 */
import type { Deal, Group, Network } from '../types.ts'

import { fundedUntilAt } from '../../server/shared/funded-until.ts'
import { dealEndUnix } from './network.ts'

/** Real Filecoin time: one epoch every 30 s. */
const REAL_EPOCH_SECONDS = 30

/**
 * "540 days": how far `unixSeconds` is on a sped-up network's clock, where a
 * 540-day deal ends two wall-clock days from now; undefined in real time.
 */
export function networkTimeUntil(
  unixSeconds: number,
  epochSeconds: number | undefined,
  nowSeconds = Date.now() / 1000,
): string | undefined {
  if (!epochSeconds || epochSeconds >= REAL_EPOCH_SECONDS || unixSeconds <= nowSeconds) return undefined
  const days = ((unixSeconds - nowSeconds) * REAL_EPOCH_SECONDS) / epochSeconds / 86400
  return days >= 1 ? `${Math.round(days)} days` : `${Math.max(1, Math.round(days * 24))} hours`
}

/** The first and last end (unix seconds) of the retrievable copies, when they differ; undefined when they all end together. */
export function copiesEndSpread(
  groups: readonly Group[],
  network: Network,
  genesisTimestamp?: number,
  epochSeconds?: number,
): { first: number; last: number } | undefined {
  // In time, not epochs: a PDP copy's end is on its own chain's clock (the gateway's date), a deal's on the network's.
  const ends = groups.flatMap((g) =>
    (g.deals ?? []).filter((d) => d.isRetrievable).flatMap((d) => dealEndUnix(d, network, genesisTimestamp, epochSeconds) ?? []),
  )
  if (ends.length < 2) return undefined
  const first = Math.min(...ends)
  const last = Math.max(...ends)
  return first !== last ? { first, last } : undefined
}

/** Funding of 14 days or less is short: the gateway's WARNING, as filecoin-pin draws the line. */
const SHORT_RUNWAY_DAYS = 14

/**
 * When the file's warm (PDP) copies stop being paid for, if that is 14 days
 * or less away on the network's own clock: `ranOut` once the date has passed
 * (the account is in deficit). Undefined when they are funded for longer, or
 * the file has no PDP copy on chain.
 */
export function pdpFundingShortfall(
  groups: readonly Group[],
  network: Network,
  genesisTimestamp?: number,
  epochSeconds?: number,
  nowSeconds = Date.now() / 1000,
): { until: number; ranOut: boolean } | undefined {
  // Only copies in a data set are paid for; an upload is not yet.
  const paid = groups.flatMap((g) =>
    (g.deals ?? []).filter((d: Deal) => d.route === 'pdp' && (d.state === 'published' || d.state === 'active')),
  )
  if (paid.length === 0) return undefined
  // Each copy's end as the gateway dated it on its own chain's clock (else on the network's); the first one counts.
  const ends = paid.flatMap((d) => dealEndUnix(d, network, genesisTimestamp, epochSeconds) ?? [])
  if (ends.length === 0) return undefined
  // The one 'funded until' the admin page and the wallet CLI show too.
  const funded = fundedUntilAt(Math.min(...ends), epochSeconds ?? REAL_EPOCH_SECONDS, nowSeconds)
  return funded.networkDays <= SHORT_RUNWAY_DAYS ? { until: funded.at, ranOut: funded.at <= nowSeconds } : undefined
}
