import { createHash } from 'node:crypto'
import * as dagCbor from '@ipld/dag-cbor'
import { CID } from 'multiformats/cid'
import * as Digest from 'multiformats/hashes/digest'
import { parseAddress } from '../../shared/address.ts'
import {
  EPOCHS_PER_DAY,
  epochToTimestamp,
  SIMNET_DEFAULT_GENESIS,
  spedUpClock,
  timestampToEpoch,
  type NetworkClock,
} from '../../shared/epochs.ts'
import type { ChainHead, DealProposal, MarketDeal, MinerInfo, NetworkPort, ProviderTerms } from '../../shared/chain.ts'
import { generateProviders, isBusyDay, type SimProvider } from './providers.ts'
import { openSimChainStore } from './chain-store.ts'
import { between, seededRandom } from './random.ts'
import { cborCid } from './chain-wire.ts'

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

/** What the simulated chain knows about the message that published a deal (StateSearchMsg). */
export interface PublishedMessage {
  dealId: number
  /** The epoch of the tipset the message was executed in. */
  epoch: number
  /** The proposal it published: the message stays on chain after the deal leaves the market (ChainGetMessage). */
  proposal: DealProposal
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
}

interface SimDeal {
  dealId: number
  proposal: DealProposal
  proposedEpoch: number
  publishedEpoch: number
  /** Epoch the sector with the deal is proven, or -1 if never. */
  sectorStart: number
  /** Epoch the sealing would have ended; for a deal never sealed, when its provider learns it failed. */
  sealedAt: number
  slashAt: number
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

/** The simulated chain keeps no messages: a deal's publish message is named by its deal id, the same in every process. */
export function publishMessageCid(dealId: number): string {
  return cborCid(dagCbor.encode(['simnet PublishStorageDeals', dealId])).toString()
}

/** The network version of mainnet today: nv28 (FireHorse; lotus chain/consensus/filcns/upgrades.go). */
export const SIMNET_NETWORK_VERSION = 28

/** 1 PiB: what every simulated client may store in verified deals. */
const SIMULATED_DATACAP = 2n ** 50n

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
  const providers = generateProviders(rand, options.providerCount ?? 24)
  const byId = new Map<string, SimProvider>(providers.map((p) => [p.id, p]))
  const deals = new Map<number, SimDeal>()
  const byClient = new Map<string, number[]>()
  const firstDealId = 1_000_000 + between(rand('first-deal-id'), 0, 1_000_000)
  let nextDealId = firstDealId
  // Demo deals take the ids just below the first real one, downwards: each process seeds its own,
  // they must never meet real ones, and like real deals they come before NextID (the deal service
  // finds deals by walking ids up to the market actor's NextID).
  let nextDemoDealId = firstDealId - 1
  /** Every deal id below this one is published (or was and left the market). */
  let publishedBelow = firstDealId
  const baseVersion = options.networkVersion ?? SIMNET_NETWORK_VERSION
  const nv29Epoch = options.nv29Epoch ?? null
  const networkVersionAt = (epoch: number) => (nv29Epoch !== null && epoch >= nv29Epoch ? Math.max(29, baseVersion) : baseVersion)
  const publishCids = new Map<string, number>()

  const headEpoch = () => Math.max(0, timestampToEpoch(clock, now() / 1000))

  /**
   * The epoch the deal's sector is proven in, or -1 if it never is. From nv29 a verified deal
   * can no longer be activated: its DataCap allocation can no longer be claimed (FIP-0118, 1.1).
   */
  const activationOf = (d: SimDeal): number => {
    if (d.sectorStart < 0) return -1
    return d.proposal.VerifiedDeal && networkVersionAt(d.sectorStart) >= 29 ? -1 : d.sectorStart
  }

  /**
   * The deal as the market actor holds it at `head`, or null when it is not in its state: not
   * yet published, or removed. The actor removes a deal not activated by its start epoch, a
   * terminated (slashed) one, and an expired one; StateMarketStorageDeal then answers "deal not
   * found" (lotus chain/stmgr/actors.go, GetStorageDeal).
   */
  const view = (d: SimDeal, head: number): MarketDeal | null => {
    if (head < d.publishedEpoch) return null
    const activation = activationOf(d)
    if (activation < 0 && head >= d.proposal.StartEpoch) return null
    if (activation >= 0 && d.slashAt >= 0 && head >= d.slashAt) return null
    if (head >= d.proposal.EndEpoch) return null
    const started = activation >= 0 && head >= activation
    return {
      dealId: d.dealId,
      proposal: d.proposal,
      publishedEpoch: d.publishedEpoch,
      state: { SectorStartEpoch: started ? activation : -1, LastUpdatedEpoch: started ? activation : -1, SlashEpoch: -1 },
    }
  }

  /** `persist` false: demo deals, re-seeded on every start, stay out of the saved chain. */
  const addDeal = (proposal: DealProposal, proposedEpoch: number, restoredId?: number, persist = true): SimDeal => {
    const dealId = restoredId ?? (persist ? nextDealId++ : nextDemoDealId--)
    const r = (label: string) => rand('deal', dealId, label)
    const publishedEpoch = proposedEpoch + between(r('publish'), 2, 40)
    const fate = r('fate')
    // Sealing a sector takes 1 to 6 hours. About 8 % never get sealed and 3 % are slashed later:
    // real networks fail too.
    const sealedAt = Math.min(proposal.StartEpoch, publishedEpoch + between(r('seal'), 120, 720))
    const sectorStart = fate < 0.08 ? -1 : sealedAt
    const slashAt = fate >= 0.08 && fate < 0.11 ? sealedAt + between(r('slash'), 10, 30 * EPOCHS_PER_DAY) : -1
    const deal: SimDeal = { dealId, proposal, proposedEpoch, publishedEpoch, sectorStart, sealedAt, slashAt }
    deals.set(dealId, deal)
    publishCids.set(publishMessageCid(dealId), dealId)
    const list = byClient.get(proposal.Client) ?? []
    list.push(dealId)
    byClient.set(proposal.Client, list)
    if (restoredId === undefined && persist) chainStore?.saveDeal(dealId, proposal, proposedEpoch)
    return deal
  }

  /**
   * Takes in deals another process saved (the deal service reads what the
   * gateway's providers accepted), so every process over one state file sees
   * one chain. Cheap when nothing is new: one indexed query.
   */
  let lastSavedId = -1
  const catchUp = () => {
    for (const saved of chainStore?.deals(lastSavedId) ?? []) {
      lastSavedId = saved.dealId
      if (deals.has(saved.dealId)) continue
      addDeal(saved.proposal, saved.proposedEpoch, saved.dealId)
      nextDealId = Math.max(nextDealId, saved.dealId + 1)
    }
  }
  catchUp()

  const terms = (p: SimProvider, head: number): ProviderTerms => {
    const day = Math.floor(head / EPOCHS_PER_DAY)
    const busy = []
    for (let d = day - 1; d <= day + 30; d++) {
      if (isBusyDay(rand, p.id, d)) busy.push({ from: d * EPOCHS_PER_DAY, to: (d + 1) * EPOCHS_PER_DAY - 1 })
    }
    return { ...p.terms, busy }
  }

  const peers = new Map<string, { peerId: string; multiaddrs: string[] }>()
  // Escrow and nonces live in memory: the simulated chain keeps its deals, not its accounts.
  const escrow = new Map<string, bigint>()
  const nonces = new Map<string, number>()

  const lookupIdSync = (address: string): string | null => {
    const parsed = parseAddress(address)
    if (!parsed.ok) return null
    if (parsed.address.protocol === 0) return `f0${parsed.address.id}`
    // Every robust address has an actor on the simulated chain, with a stable id.
    return `f0${between(rand('actor', parsed.address.text.slice(1)), 100_000, 9_999_999)}`
  }

  const publishedMessage = (cid: string): PublishedMessage | null => {
    catchUp()
    const dealId = publishCids.get(cid)
    const d = dealId === undefined ? undefined : deals.get(dealId)
    return d && headEpoch() >= d.publishedEpoch ? { dealId: d.dealId, epoch: d.publishedEpoch, proposal: d.proposal } : null
  }

  return {
    kind: 'simnet',
    clock,
    headEpoch,
    nv29Epoch,
    networkVersionAt,
    async networkVersion() {
      return networkVersionAt(headEpoch())
    },
    // The market gives a deal its id when it publishes it, so NextID is past every published deal and
    // no unpublished one. Here ids are taken at the proposal and deals publish a few epochs later, not
    // always in id order: NextID is the lowest id not yet published, so that every id below it is final.
    async nextDealId() {
      catchUp()
      const head = headEpoch()
      while (publishedBelow < nextDealId && (deals.get(publishedBelow)?.publishedEpoch ?? Infinity) <= head) publishedBelow++
      return publishedBelow
    },
    publishedMessage,
    async chainHead(): Promise<ChainHead> {
      const epoch = headEpoch()
      return { epoch, timestamp: epochToTimestamp(clock, epoch) }
    },
    async lookupId(address) {
      return lookupIdSync(address)
    },
    // Every client of the simulated network is a verified client with ample DataCap, and holds escrow only once it adds some:
    // verified deals at price 0, the default, need nothing more.
    async dataCap(address) {
      return lookupIdSync(address) ? SIMULATED_DATACAP : null
    },
    async collateralBounds(pieceSize, verified) {
      return simulatedCollateralBounds(pieceSize, verified)
    },
    async marketBalance(address) {
      const id = lookupIdSync(address)
      return { escrow: (id && escrow.get(id)) || 0n, locked: 0n }
    },
    addEscrow(address, amount) {
      const id = lookupIdSync(address)
      if (id) escrow.set(id, (escrow.get(id) ?? 0n) + amount)
    },
    nonce: (address) => nonces.get(lookupIdSync(address) ?? address) ?? 0,
    useNonce(address) {
      const key = lookupIdSync(address) ?? address
      nonces.set(key, (nonces.get(key) ?? 0) + 1)
    },
    marketDeals() {
      catchUp()
      const head = headEpoch()
      return [...deals.keys()].sort((a, b) => a - b).flatMap((id) => view(deals.get(id)!, head) ?? [])
    },
    sealingFailsAt(dealId) {
      catchUp()
      const d = deals.get(dealId)
      return d && d.sectorStart < 0 ? d.sealedAt : null
    },
    async minerInfo(address): Promise<MinerInfo | null> {
      const id = lookupIdSync(address)
      const p = id ? byId.get(id) : undefined
      if (!p) return null
      const peer = peers.get(p.id)
      return {
        id: p.id,
        owner: p.id,
        worker: p.id,
        peerId: peer?.peerId ?? null,
        multiaddrs: peer?.multiaddrs ?? [],
        sectorSize: 32 * 1024 ** 3,
      }
    },
    publishPeer(providerId, peer) {
      if (peer) peers.set(providerId, peer)
      else peers.delete(providerId)
    },
    // One deal per simulated publish message, so the proposal needs no finding in it.
    publishedDealId: async (publishCid) => publishedMessage(publishCid)?.dealId ?? null,
    async getDeal(dealId) {
      catchUp()
      const d = deals.get(dealId)
      return d ? view(d, headEpoch()) : null
    },
    async *dealsByClients(clientIds) {
      catchUp()
      const head = headEpoch()
      const ids = clientIds.flatMap((c) => byClient.get(c) ?? []).sort((a, b) => a - b)
      for (const id of ids) {
        const v = view(deals.get(id)!, head)
        if (v) yield v
      }
    },
    async listProviders() {
      return providers.map((p) => p.id)
    },
    async providerTerms(providerId) {
      const p = byId.get(providerId)
      return p ? terms(p, headEpoch()) : null
    },
    async proposeDeal(proposal) {
      const p = byId.get(proposal.Provider)
      if (!p) return { accepted: false, reason: 'PROVIDER_NOT_FOUND' }
      if (!p.terms.online) return { accepted: false, reason: 'SERVICE_UNAVAILABLE' }
      const head = headEpoch()
      // From nv29 no DataCap allocation can be made (FIP-0118, 1.1), and publishing a verified deal
      // needs one: the provider's PublishStorageDeals fails and the deal never reaches the chain.
      if (proposal.VerifiedDeal && networkVersionAt(head) >= 29) return { accepted: false, reason: 'PUBLISH_FAILED' }
      catchUp()
      const deal = addDeal(proposal, head)
      return { accepted: true, dealId: deal.dealId, publishCid: publishMessageCid(deal.dealId), deal: view(deal, head) }
    },
    async seedClientDeals(clientId, count) {
      const head = headEpoch()
      for (let i = 0; i < count; i++) {
        const r = (label: string) => rand('seeded-deal', clientId, i, label)
        const provider = providers[between(r('provider'), 0, providers.length - 1)]
        const proposedEpoch = Math.max(0, head - between(r('age'), 0, 400 * EPOCHS_PER_DAY))
        const start = proposedEpoch + between(r('lead'), 2880, 10_080)
        const verified = r('verified') < 0.7
        addDeal(
          {
            PieceCID: { '/': seededPieceCid(`${options.seed}/${clientId}/${i}`) },
            PieceSize: 2 ** between(r('size'), 20, 35),
            VerifiedDeal: verified,
            Client: clientId,
            Provider: provider.id,
            Label: '',
            StartEpoch: start,
            EndEpoch: start + between(r('duration'), 180, 540) * EPOCHS_PER_DAY,
            StoragePricePerEpoch: verified ? provider.terms.verifiedPrice : provider.terms.unverifiedPrice,
            ProviderCollateral: '0',
            ClientCollateral: '0',
          },
          proposedEpoch,
          undefined,
          false,
        )
      }
    },
    async close() {
      chainStore?.close()
    },
  }
}

/** A well-formed piece CID (fil-commitment-unsealed, sha2-256-trunc254-padded) for a seeded demo deal. */
function seededPieceCid(seed: string): string {
  const bytes = createHash('sha256').update(seed).digest()
  // CommP zeroes the two top bits of the last byte (254-bit field element).
  bytes[31] &= 0x3f
  return CID.create(1, 0xf101, Digest.create(0x1012, bytes)).toString()
}
