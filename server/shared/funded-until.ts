/**
 * "How long is it paid for?" answered once (issue 38, item 4): when PDP
 * copies paid up to an epoch stop being paid for, and how much of the
 * network's own time that is. The sidebar tab, the admin page (through the
 * gateway's `POST /status`) and `npm run wallet -- foc` all show this, in
 * these words. On a sped-up simulated network the date is near on the wall
 * clock while the funds pay for many days of its own time: said beside it.
 */
import { EPOCH_SECONDS, EPOCHS_PER_DAY } from './epochs.ts'

export interface FundedUntil {
  /** Unix seconds: the wall-clock moment the network's head reaches the funded epoch. */
  at: number
  /** Days of the network's own time from now until then; 0 once passed. */
  networkDays: number
  /** Whether the network runs faster than real time, so that `at` is much nearer than `networkDays`. */
  spedUp: boolean
}

/** When copies paid up to `endEpoch` stop being paid for, on a network whose epoch e starts at `genesis + e · epochSeconds`. */
export function fundedUntil(
  endEpoch: number,
  clock: { genesis: number; epochSeconds: number },
  nowSeconds = Date.now() / 1000,
): FundedUntil {
  return fundedUntilAt(clock.genesis + endEpoch * clock.epochSeconds, clock.epochSeconds, nowSeconds)
}

/** The same from the moment itself (unix seconds, as the gateway dates a PDP copy's end), on a network whose epochs last `epochSeconds`. */
export function fundedUntilAt(at: number, epochSeconds: number, nowSeconds = Date.now() / 1000): FundedUntil {
  const epochsLeft = Math.max(0, (at - nowSeconds) / epochSeconds)
  return { at, networkDays: epochsLeft / EPOCHS_PER_DAY, spedUp: epochSeconds < EPOCH_SECONDS - 1e-9 }
}

/**
 * The same from what the gateway's status says (`fundedUntil`, `fundedDays`):
 * sped up when the network's days outrun the wall clock's.
 */
export function fundedUntilOfStatus(fundedUntilIso: string, fundedDays: number | undefined, nowSeconds = Date.now() / 1000): FundedUntil {
  const at = Date.parse(fundedUntilIso) / 1000
  const wallDays = Math.max(0, (at - nowSeconds) / 86400)
  const networkDays = fundedDays ?? wallDays
  return { at, networkDays, spedUp: networkDays > wallDays * 1.5 + 1 / 24 }
}

/** "30 days", "5 hours": a span of the network's time, rounded as a person says it. */
export function networkSpan(days: number): string {
  if (days >= 1) {
    const whole = Math.round(days)
    return `${whole} day${whole === 1 ? '' : 's'}`
  }
  const hours = Math.max(1, Math.round(days * 24))
  return `${hours} hour${hours === 1 ? '' : 's'}`
}

/** The words beside the date on a sped-up network ("30 days in simulated network time"); undefined in real time. */
export function fundedUntilAside(f: FundedUntil): string | undefined {
  return f.spedUp && f.networkDays > 0 ? `${networkSpan(f.networkDays)} in simulated network time` : undefined
}

/** "2026-11-28 03:10 UTC (30 days in simulated network time)": the moment in words, with the network's own span on a sped-up one. */
export function fundedUntilWords(f: FundedUntil): string {
  const aside = fundedUntilAside(f)
  return `${new Date(f.at * 1000).toISOString().slice(0, 16).replace('T', ' ')} UTC${aside ? ` (${aside})` : ''}`
}
