import { epochToTimestamp, SIMNET_DEFAULT_GENESIS, spedUpClock, timestampToEpoch, type NetworkClock } from '../../shared/epochs.ts'
import type { ChainHead, DealProposal, MarketDeal, NetworkPort } from '../../shared/chain.ts'
import { createChainAccounts } from './chain-accounts.ts'
import { createChainDeals, type PublishedMessage } from './chain-deals.ts'
import { createChainMiners } from './chain-miners.ts'
import { openSimChainStore } from './chain-store.ts'
import { demoDeals } from './demo-deals.ts'
import { seededRandom } from './random.ts'

export { publishMessageCid, type PublishedMessage } from './chain-deals.ts'

export interface SimnetOptions {
  seed: string
  /** Simulated seconds per real second; 1 keeps the head on the wall clock. Kept in `stateFile` once chosen. */
  speed?: number
  genesis?: number
  /** Injected clock (unix ms) so tests control time. */
  now?: () => number
  providerCount?: number
  /** The chain's clock when another process keeps it (a deal service replica's view of the simulation). */
  clock?: NetworkClock
  /**
   * SQLite file that keeps the simulated chain's clock anchor and deals
   * across restarts (e.g. `<DATA_DIR>/simnet/chain.sqlite`); unset: in memory.
   */
  stateFile?: string
  /** The network version from genesis until the nv29 upgrade (default 28, mainnet's since FireHorse). */
  networkVersion?: number
  /**
   * Epoch of the nv29 upgrade (FIP-0118, the end of Fil+); null or unset: none scheduled,
   * as on mainnet today (lotus build/buildconstants/params_mainnet.go, UpgradeXxHeight).
   */
  nv29Epoch?: number | null
}

/** `publishCid`: the CID of the PublishStorageDeals message that put the deal on chain (StateSearchMsg finds it). */
export type ProposeResult =
  { accepted: true; deal: MarketDeal | null; dealId: number; publishCid: string } | { accepted: false; reason: string }

/** The simulated network: everything the real chain would tell us, computed from a seed and the clock. */
export interface Simnet extends NetworkPort {
  readonly kind: 'simnet'
  /** Proposes a deal; it appears on chain at its publish epoch and moves on by itself. */
  proposeDeal(proposal: DealProposal): Promise<ProposeResult>
  /** Adds `count` deals for a client proposed over the past days (demos, benchmarks). */
  seedClientDeals(clientId: string, count: number): Promise<void>
  /** The head epoch without a promise, for the simulation's own bookkeeping. */
  headEpoch(): number
  /**
   * The epoch at which the provider of a deal finds that sealing it failed
   * (and reports it, as Boost's deal status does), or null if it seals.
   */
  sealingFailsAt(dealId: number): number | null
  /** Every deal on the simulated chain at the head, in deal id order (what Lotus's StateMarketDeals lists). */
  marketDeals(): MarketDeal[]
  /** Every deal of these clients still on chain, in deal id order (the simulation's own bookkeeping; a node has no such query). */
  dealsByClients(clientIds: string[]): AsyncIterable<MarketDeal>
  /** The network version at an epoch (StateNetworkVersion). */
  networkVersionAt(epoch: number): number
  /** The nv29 upgrade epoch, null when none is scheduled (StateGetNetworkParams' UpgradeXxHeight). */
  readonly nv29Epoch: number | null
  /** The PublishStorageDeals message with this CID, once it is on chain at the head; null before, or for another CID. */
  publishedMessage(cid: string): PublishedMessage | null
  /** Credits market escrow to an address (what an AddBalance message does on chain); in memory. */
  addEscrow(address: string, amount: bigint): void
  /** The next nonce of an address, and taking it (MpoolGetNonce / an accepted MpoolPush). */
  nonce(address: string): number
  useNonce(address: string): void
  /** Publishes where a provider's libp2p peer listens (its miner info), as a provider does with `lotus-miner actor set-addrs`. */
  publishPeer(providerId: string, peer: { peerId: string; multiaddrs: string[] } | null): void
  /** Gives a provider's miner actor another sector size (StateMinerInfo's SectorSize), as a devnet's is made with 8 MiB sectors. */
  setSectorSize(providerId: string, bytes: number): void
}

/**
 * The provider collateral bounds of the simulated market: a minimum that
 * grows with the piece (verified pieces count ten times, as their power
 * does), so that a client must ask for them as on a real network.
 */
export function simulatedCollateralBounds(pieceSize: number, verified: boolean): { min: bigint; max: bigint } {
  const min = BigInt(pieceSize) * (verified ? 10n : 1n) * 1_000n
  return { min, max: min * 1_000_000n }
}

/** The network version of mainnet today: nv28 (FireHorse; lotus chain/consensus/filcns/upgrades.go). */
export const SIMNET_NETWORK_VERSION = 28

/** Creates the embedded simulated network; deterministic under `seed` for a given clock. */
export function createSimnet(options: SimnetOptions): Simnet {
  const rand = seededRandom(options.seed)
  const now = options.now ?? Date.now
  const speed = options.speed ?? 1
  const chainStore = options.stateFile ? openSimChainStore(options.stateFile) : undefined
  const genesis = options.genesis ?? SIMNET_DEFAULT_GENESIS
  // A saved clock keeps the head moving forward across restarts, even when sped up.
  const clock: NetworkClock =
    options.clock ?? (chainStore ? chainStore.clock(genesis, speed, now()) : spedUpClock(genesis, speed, now() / 1000))
  const baseVersion = options.networkVersion ?? SIMNET_NETWORK_VERSION
  const nv29Epoch = options.nv29Epoch ?? null
  const networkVersionAt = (epoch: number) => (nv29Epoch !== null && epoch >= nv29Epoch ? Math.max(29, baseVersion) : baseVersion)
  const headEpoch = () => Math.max(0, timestampToEpoch(clock, now() / 1000))

  // What the chain holds, each part in its own module: the storage providers, the accounts, the market's deals.
  const miners = createChainMiners(rand, options.providerCount ?? 24)
  const accounts = createChainAccounts(rand)
  const deals = createChainDeals({ rand, store: chainStore, headEpoch, networkVersionAt })

  return {
    kind: 'simnet',
    clock,
    headEpoch,
    nv29Epoch,
    networkVersionAt,
    async networkVersion() {
      return networkVersionAt(headEpoch())
    },
    nextDealId: async () => deals.nextDealId(),
    publishedMessage: deals.publishedMessage,
    async chainHead(): Promise<ChainHead> {
      const epoch = headEpoch()
      return { epoch, timestamp: epochToTimestamp(clock, epoch) }
    },
    lookupId: async (address) => accounts.lookupId(address),
    dataCap: async (address) => accounts.dataCap(address),
    async collateralBounds(pieceSize, verified) {
      return simulatedCollateralBounds(pieceSize, verified)
    },
    marketBalance: async (address) => accounts.marketBalance(address),
    addEscrow: accounts.addEscrow,
    nonce: accounts.nonce,
    useNonce: accounts.useNonce,
    marketDeals: deals.marketDeals,
    sealingFailsAt: deals.sealingFailsAt,
    async minerInfo(address) {
      const id = accounts.lookupId(address)
      return id ? miners.minerInfo(id) : null
    },
    publishPeer: miners.publishPeer,
    setSectorSize: miners.setSectorSize,
    // One deal per simulated publish message, so the proposal needs no finding in it.
    publishedDealId: async (publishCid) => deals.publishedMessage(publishCid)?.dealId ?? null,
    getDeal: async (dealId) => deals.getDeal(dealId),
    dealsByClients: deals.dealsByClients,
    async listProviders() {
      return miners.providers.map((p) => p.id)
    },
    providerTerms: async (providerId) => miners.terms(providerId, headEpoch()),
    async proposeDeal(proposal) {
      const p = miners.provider(proposal.Provider)
      if (!p) return { accepted: false, reason: 'PROVIDER_NOT_FOUND' }
      if (!p.terms.online) return { accepted: false, reason: 'SERVICE_UNAVAILABLE' }
      const head = headEpoch()
      // From nv29 no DataCap allocation can be made (FIP-0118, 1.1), and publishing a verified deal
      // needs one: the provider's PublishStorageDeals fails and the deal never reaches the chain.
      if (proposal.VerifiedDeal && networkVersionAt(head) >= 29) return { accepted: false, reason: 'PUBLISH_FAILED' }
      return { accepted: true, ...deals.propose(proposal, head) }
    },
    async seedClientDeals(clientId, count) {
      const demo = { seed: options.seed, rand, providers: miners.providers, head: headEpoch() }
      for (const { proposal, proposedEpoch } of demoDeals(demo, clientId, count)) deals.addDemo(proposal, proposedEpoch)
    },
    async close() {
      chainStore?.close()
    },
  }
}
