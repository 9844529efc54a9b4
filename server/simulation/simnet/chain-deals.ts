import * as dagCbor from '@ipld/dag-cbor'
import { EPOCHS_PER_DAY } from '../../shared/epochs.ts'
import type { DealProposal, MarketDeal } from '../../shared/chain.ts'
import type { SimChainStore } from './chain-store.ts'
import { cborCid } from './chain-wire.ts'
import { between } from './random.ts'

/** What the simulated chain knows about the message that published a deal (StateSearchMsg). */
export interface PublishedMessage {
  dealId: number
  /** The epoch of the tipset the message was executed in. */
  epoch: number
  /** The proposal it published: the message stays on chain after the deal leaves the market (ChainGetMessage). */
  proposal: DealProposal
}

/** The simulated chain keeps no messages: a deal's publish message is named by its deal id, the same in every process. */
export function publishMessageCid(dealId: number): string {
  return cborCid(dagCbor.encode(['simnet PublishStorageDeals', dealId])).toString()
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
 * The deals of the simulated market actor: each one's fate (publish delay,
 * sealing, slashing) drawn from the seed and its id, and what the actor
 * shows of it at the head. Reads first take in the deals other processes
 * saved to the shared state file.
 */
export interface ChainDeals {
  /** The market actor's NextID at the head. */
  nextDealId(): number
  /** The PublishStorageDeals message with this CID, once it is on chain at the head; null before, or for another CID. */
  publishedMessage(cid: string): PublishedMessage | null
  /** Every deal in the market actor's state at the head, in deal id order. */
  marketDeals(): MarketDeal[]
  /** Every deal of these clients still on chain, in deal id order. */
  dealsByClients(clientIds: string[]): AsyncIterable<MarketDeal>
  /** The deal as the market actor holds it at the head; null when it is not in its state. */
  getDeal(dealId: number): MarketDeal | null
  /** The epoch at which the provider of a deal finds that sealing it failed, or null if it seals. */
  sealingFailsAt(dealId: number): number | null
  /** Takes a deal proposed at `head`, saved for every process over the state file, and how the actor shows it then. */
  propose(proposal: DealProposal, head: number): { dealId: number; publishCid: string; deal: MarketDeal | null }
  /** Adds a demo deal: demo deals, re-seeded on every start, stay out of the saved chain. */
  addDemo(proposal: DealProposal, proposedEpoch: number): void
}

export function createChainDeals(o: {
  rand: (...labels: (string | number)[]) => number
  /** Where deals are saved and shared between processes; unset: in memory. */
  store?: SimChainStore
  headEpoch: () => number
  networkVersionAt: (epoch: number) => number
}): ChainDeals {
  const { rand, store: chainStore, headEpoch, networkVersionAt } = o
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
  const publishCids = new Map<string, number>()

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

  return {
    // The market gives a deal its id when it publishes it, so NextID is past every published deal and
    // no unpublished one. Here ids are taken at the proposal and deals publish a few epochs later, not
    // always in id order: NextID is the lowest id not yet published, so that every id below it is final.
    nextDealId() {
      catchUp()
      const head = headEpoch()
      while (publishedBelow < nextDealId && (deals.get(publishedBelow)?.publishedEpoch ?? Infinity) <= head) publishedBelow++
      return publishedBelow
    },
    publishedMessage(cid) {
      catchUp()
      const dealId = publishCids.get(cid)
      const d = dealId === undefined ? undefined : deals.get(dealId)
      return d && headEpoch() >= d.publishedEpoch ? { dealId: d.dealId, epoch: d.publishedEpoch, proposal: d.proposal } : null
    },
    marketDeals() {
      catchUp()
      const head = headEpoch()
      return [...deals.keys()].sort((a, b) => a - b).flatMap((id) => view(deals.get(id)!, head) ?? [])
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
    getDeal(dealId) {
      catchUp()
      const d = deals.get(dealId)
      return d ? view(d, headEpoch()) : null
    },
    sealingFailsAt(dealId) {
      catchUp()
      const d = deals.get(dealId)
      return d && d.sectorStart < 0 ? d.sealedAt : null
    },
    propose(proposal, head) {
      catchUp()
      const deal = addDeal(proposal, head)
      return { dealId: deal.dealId, publishCid: publishMessageCid(deal.dealId), deal: view(deal, head) }
    },
    addDemo(proposal, proposedEpoch) {
      addDeal(proposal, proposedEpoch, undefined, false)
    },
  }
}
