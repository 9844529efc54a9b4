import { EPOCHS_PER_DAY } from '../../shared/epochs.ts'
import type { MinerInfo, ProviderTerms } from '../../shared/chain.ts'
import { generateProviders, isBusyDay, type SimProvider } from './providers.ts'

/** Where a provider's libp2p peer listens, as its miner info publishes it. */
export interface MinerPeer {
  peerId: string
  multiaddrs: string[]
}

/** The storage providers of the simulated chain: their seeded terms and their miner actors' info. */
export interface ChainMiners {
  /** In id order. */
  readonly providers: readonly SimProvider[]
  provider(providerId: string): SimProvider | undefined
  /** A provider's terms at `head`, with the days it is busy around it; null for no provider. */
  terms(providerId: string, head: number): ProviderTerms | null
  minerInfo(providerId: string): MinerInfo | null
  publishPeer(providerId: string, peer: MinerPeer | null): void
  /**
   * A miner actor of another sector size than mainnet's usual 32 GiB: devnets
   * make theirs with 8 MiB sectors (boost docker/devnet/lotus-miner/Dockerfile
   * SECTOR_SIZE=8388608; curio docker/curio/entrypoint.sh, sptool actor
   * new-miner --sector-size 8MiB).
   */
  setSectorSize(providerId: string, bytes: number): void
}

export function createChainMiners(rand: (...labels: (string | number)[]) => number, count: number): ChainMiners {
  const providers = generateProviders(rand, count)
  const byId = new Map<string, SimProvider>(providers.map((p) => [p.id, p]))
  const peers = new Map<string, MinerPeer>()
  const sectorSizes = new Map<string, number>()

  const terms = (p: SimProvider, head: number): ProviderTerms => {
    const day = Math.floor(head / EPOCHS_PER_DAY)
    const busy = []
    for (let d = day - 1; d <= day + 30; d++) {
      if (isBusyDay(rand, p.id, d)) busy.push({ from: d * EPOCHS_PER_DAY, to: (d + 1) * EPOCHS_PER_DAY - 1 })
    }
    return { ...p.terms, busy }
  }

  return {
    providers,
    provider: (providerId) => byId.get(providerId),
    terms(providerId, head) {
      const p = byId.get(providerId)
      return p ? terms(p, head) : null
    },
    minerInfo(providerId) {
      const p = byId.get(providerId)
      if (!p) return null
      const peer = peers.get(p.id)
      return {
        id: p.id,
        owner: p.id,
        worker: p.id,
        peerId: peer?.peerId ?? null,
        multiaddrs: peer?.multiaddrs ?? [],
        sectorSize: sectorSizes.get(p.id) ?? 32 * 1024 ** 3,
      }
    },
    setSectorSize(providerId, bytes) {
      sectorSizes.set(providerId, bytes)
    },
    publishPeer(providerId, peer) {
      if (peer) peers.set(providerId, peer)
      else peers.delete(providerId)
    },
  }
}
