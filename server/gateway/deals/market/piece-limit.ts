import type { Logger } from '../../../shared/logger.ts'
import type { ContentStore } from '../../content/index.ts'
import { bytes } from '../../words.ts'
import type { StorageProviderPort } from './provider-port.ts'
import type { DealServiceClient } from './service-client.ts'

/** How often the providers' limits are read again: an ask changes rarely, a policy now and then. */
const RECHECK_MS = 10 * 60_000

/** The largest padded piece (a power of two) of at most `bytes`. */
const pieceSizeAtMost = (n: number) => 2 ** Math.floor(Math.log2(n))

/**
 * Keeps groups small enough for every provider a piece will be offered to:
 * the providers the onboarding policy's groups name (on a Lotus node the
 * deal service offers pieces to no others), each taking pieces up to its
 * ask's MaxPieceSize and its sector size (the port's ask says the smaller).
 * Read at the first pass and every ten minutes; the group size only goes
 * down (to the configured GROUP_SIZE at most), and the log says why. A
 * provider that does not answer is left out until it does.
 */
export function createPieceLimit(o: {
  service: Pick<DealServiceClient, 'policyProviders'>
  providers: Pick<StorageProviderPort, 'ask'>
  content: Pick<ContentStore, 'groupSize' | 'limitGroupSize'>
  logger: Logger
  now: () => number
  withTimeout: <T>(run: (signal: AbortSignal) => Promise<T>) => Promise<T>
}): { check(): Promise<void> } {
  let next = 0
  return {
    async check() {
      if (!o.service.policyProviders || o.now() < next) return
      const named = await o.service.policyProviders()
      next = o.now() + RECHECK_MS
      const smallest = await smallestLimit(named)
      if (!smallest || smallest.pieceSize >= o.content.groupSize()) return
      await o.content.limitGroupSize(smallest.pieceSize)
      o.logger.warn(
        { provider: smallest.provider, maxPieceSize: smallest.maxPieceSize, groupSize: o.content.groupSize() },
        `groups are now at most ${bytes(o.content.groupSize())} pieces: provider ${smallest.provider} takes pieces of at most ${bytes(smallest.maxPieceSize)} (its ask's MaxPieceSize or its sector size, whichever is smaller)`,
      )
    },
  }

  async function smallestLimit(providers: string[]) {
    // All at once: one provider that does not answer holds the others up no longer than the call timeout.
    const asks = await Promise.all(
      providers.map(async (provider) => ({
        provider,
        ask: await o.withTimeout((signal) => o.providers.ask(provider, { signal })).catch(() => null),
      })),
    )
    let smallest: { provider: string; maxPieceSize: number; pieceSize: number } | undefined
    for (const { provider, ask } of asks) {
      if (!ask || !(ask.maxPieceSize > 0)) continue
      if (!smallest || ask.maxPieceSize < smallest.maxPieceSize)
        smallest = { provider, maxPieceSize: ask.maxPieceSize, pieceSize: pieceSizeAtMost(ask.maxPieceSize) }
    }
    return smallest
  }
}
