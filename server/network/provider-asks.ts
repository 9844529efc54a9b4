import { EPOCHS_PER_DAY, MAX_DEAL_DAYS, MIN_DEAL_DAYS } from '../shared/epochs.ts'
import type { ProviderClient } from './boost/client.ts'
import type { NetworkPort, ProviderTerms } from './types.ts'

const MIN_DURATION = MIN_DEAL_DAYS * EPOCHS_PER_DAY
const MAX_DURATION = MAX_DEAL_DAYS * EPOCHS_PER_DAY
const ASK_TTL_MS = 10 * 60_000
const UNREACHABLE_TTL_MS = 60_000

/**
 * The largest piece a provider can take: its ask's MaxPieceSize, but never
 * more than one of its sectors, since a deal's piece is sealed into a single
 * sector ("piece cannot fit into a sector": lotus storage/pipeline/input.go;
 * Curio reads each miner's SectorSize at start, curio market/mk12/mk12.go).
 * The ask alone does not say it: Boost and Curio default MaxPieceSize to
 * 32 GiB whatever the sector size (boost storagemarket/storedask/storedask.go,
 * curio market/mk12/mk12_utils.go DefaultMaxPieceSize), so a devnet's 8 MiB
 * sectors (boost docker/devnet/lotus-miner/Dockerfile SECTOR_SIZE=8388608,
 * curio docker/curio/entrypoint.sh --sector-size 8MiB) ask for 32 GiB.
 */
export const largestPieceTaken = (maxPieceSize: number, sectorSize: number | undefined): number =>
  sectorSize && sectorSize > 0 ? Math.min(maxPieceSize, sectorSize) : maxPieceSize

/**
 * A real network's providers' terms as their storage ask tells them
 * (`/fil/storage/ask/1.1.0` over libp2p, the peer found in StateMinerInfo):
 * prices and piece sizes (at most a sector, largestPieceTaken). What an ask does not say (capacity, busy days,
 * which clients) is left open. A provider that does not answer is offline.
 */
export function withProviderAsks(
  network: NetworkPort,
  client: Pick<ProviderClient, 'ask'>,
  o: { timeoutMs?: number; now?: () => number } = {},
): NetworkPort {
  const now = o.now ?? Date.now
  const cache = new Map<string, { until: number; terms: Promise<ProviderTerms | null> }>()

  async function termsOf(providerId: string): Promise<ProviderTerms | null> {
    const offline: ProviderTerms = {
      id: providerId,
      online: false,
      verifiedPrice: '0',
      unverifiedPrice: '0',
      acceptsVerified: false,
      acceptsUnverified: false,
      transferTypes: [],
      minPieceSize: 0,
      maxPieceSize: 0,
      minDuration: MIN_DURATION,
      maxDuration: MAX_DURATION,
      minStartLead: 0,
      freeCapacity: 0,
      busy: [],
      allowedClients: null,
    }
    try {
      const [ask, miner] = await Promise.all([
        client.ask(providerId, AbortSignal.timeout(o.timeoutMs ?? 15_000)),
        network.minerInfo(providerId),
      ])
      if (!ask) return offline
      return {
        ...offline,
        online: true,
        verifiedPrice: ask.verifiedPrice,
        unverifiedPrice: ask.price,
        acceptsVerified: true,
        acceptsUnverified: true,
        // Boost and Curio take online deals over HTTP.
        transferTypes: ['http'],
        minPieceSize: ask.minPieceSize,
        maxPieceSize: largestPieceTaken(ask.maxPieceSize, miner?.sectorSize),
        freeCapacity: Number.MAX_SAFE_INTEGER,
      }
    } catch {
      return offline
    }
  }

  return {
    ...network,
    async providerTerms(providerId) {
      const hit = cache.get(providerId)
      if (hit && hit.until > now()) return hit.terms
      const terms = termsOf(providerId)
      cache.set(providerId, { until: now() + ASK_TTL_MS, terms })
      void terms.then((t) => {
        if (!t?.online) cache.set(providerId, { until: now() + UNREACHABLE_TTL_MS, terms })
      })
      return terms
    },
  }
}
