import { EPOCH_SECONDS } from '../../shared/epochs.ts'
import type { Logger } from '../../shared/logger.ts'
import { randomSecret, sha256Hex } from '../../shared/secrets.ts'
import type { ContentStore, GroupRecord, RemoteSource } from '../content/index.ts'
import { blockMatchesCid } from '../content/verify-block.ts'
import { padPieceCid } from '../../shared/piece.ts'
import type { DealStore, GroupDeal } from './deal-store.ts'
import type { ClientFunds, StorageProviderPort } from './provider-port.ts'
import type { DealServiceClient } from './service-client.ts'
import { TRANSFER_PATH } from './transfer-route.ts'

export interface DealTerms {
  /** Deal duration in epochs. */
  durationEpochs: number
  /** Attofil per GiB per epoch, decimal string. */
  pricePerEpoch: string
  verified: boolean
  /** The deal must start this many epochs after the head (time to transfer and seal). */
  startOffsetEpochs: number
}

/** A group's deal progress as the engine last saw it. */
export interface DealProgress {
  /** Chain head of the engine's last pass (undefined before the first). */
  head?: number
  copies: number
  deals: GroupDeal[]
  /** The deal service's reason when the last search found no provider for the group. */
  noProviders?: string
  /** Set while the deal service cannot be reached. */
  serviceError?: string
  /** Set while the client address lacks the DataCap or escrow its deals need (nothing is proposed then). */
  fundsError?: string
  retryAfterEpochs: number
  /** Wall-clock seconds per epoch, to say when a deal starts. */
  epochSeconds: number
}

export interface DealEngineOptions {
  deals: DealStore
  content: ContentStore
  service: DealServiceClient
  providers: StorageProviderPort
  /** The client (wallet) address proposals are made from. */
  clientAddress: string
  /** The gateway's URL as providers reach it (the CAR is served under it). */
  publicUrl: () => string
  terms: DealTerms
  /** Fixed number of copies; unset: the tenant's onboarding policy decides (3 if it cannot be read yet). */
  copies?: number
  /** Time between retrieval checks of one deal. */
  retrievalCheckMs: number
  /** Longest a call to a provider may take. */
  callTimeoutMs: number
  /** Longest fetching a whole piece back from one provider may take. */
  reloadTimeoutMs: number
  /**
   * A provider that failed a group is not asked again for that group before
   * this much chain time (converted to epochs) has passed since the proposal;
   * a failed repair reload waits as long. Chain time, so that a sped-up
   * simulated network retries at its own pace.
   */
  retryAfterMs: number
  /** Deals ending within this many epochs no longer count: new ones are made (renewal), offloaded groups are reloaded for it. */
  renewBeforeEpochs: number
  /**
   * Longest a group reloaded for repair is held with its bytes on disk while
   * its copies are not back (no provider takes it, deals keep failing): then
   * it is released to offloaded, and a new reload waits `retryAfterMs`.
   */
  repairHoldEpochs: number
  logger: Logger
  now?: () => number
}

export interface TickReport {
  proposed: number
  published: number
  activated: number
  failed: number
  checked: number
  offloaded: number
  /** Offloaded groups short of copies whose reload for new deals started. */
  repairing: number
  /** Repaired groups that went back to offloaded. */
  repaired: number
  /** Groups held past `repairHoldEpochs` without their copies, released to offloaded to try again later. */
  repairsGivenUp: number
  serviceError?: string
}

/**
 * The gateway's deal work, one `tick()` at a time: follow proposals and deals
 * (proposed → published → active, or failed/ended), check that active deals
 * can be retrieved, propose new deals for groups short of copies (via the
 * deal service's best providers), and offload groups whose copies are all
 * retrievable. Repair and renewal: a deal that ended, was slashed, fails its
 * retrieval checks or ends within `renewBeforeEpochs` stops counting, so new
 * deals are made; an offloaded group is reloaded for that (held in `reload`
 * with its CAR) and goes back to offloaded once its copies are back.
 * Every step reads and writes SQLite, so a restart resumes (a held group is
 * swept back to offloaded and reloaded again on the next tick).
 */
export function createDealEngine(o: DealEngineOptions) {
  const { deals, content, providers, logger } = o
  const now = o.now ?? Date.now
  let copies = o.copies ?? 3
  const retryAfterEpochs = Math.ceil(o.retryAfterMs / 1000 / EPOCH_SECONDS)

  const withTimeout = <T>(run: (signal: AbortSignal) => Promise<T>): Promise<T> => {
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(new Error('provider call timed out')), o.callTimeoutMs)
    return run(controller.signal).finally(() => clearTimeout(timer))
  }

  async function followProposals(head: number, r: TickReport) {
    for (const d of deals.inState('proposed')) {
      const s = await withTimeout((signal) => providers.proposalState(d.provider, d.proposalId!, { signal })).catch(() => undefined)
      if (s?.state === 'published') {
        deals.markPublished(d.id, s.dealId)
        r.published++
      } else if (s?.state === 'failed') fail(d, s.reason, r)
      else if (s?.state === 'unknown') fail(d, 'PROPOSAL_LOST', r)
      // Still transferring (or no answer) when the deal should already start: it never will.
      else if (head >= d.startEpoch) fail(d, 'PROPOSAL_EXPIRED', r)
    }
  }

  async function followChain(head: number, r: TickReport) {
    // A published deal whose provider reports that sealing failed will never start: ask another provider now.
    for (const d of deals.inState('published')) {
      if (!d.proposalId) continue
      const s = await withTimeout((signal) => providers.proposalState(d.provider, d.proposalId!, { signal })).catch(() => undefined)
      if (s?.state === 'failed') fail(d, s.reason, r)
    }
    for (const d of [...deals.inState('published'), ...deals.inState('active')]) {
      const chain = await providers.dealOnChain(d.dealId!, head).catch(() => undefined)
      if (chain === undefined) continue
      if (chain === null) {
        if (head >= d.startEpoch) fail(d, 'NOT_ON_CHAIN', r)
        continue
      }
      if (chain.status === 'active' && d.state === 'published') {
        deals.markActive(d.id)
        r.activated++
      } else if (chain.status === 'published-expired') fail(d, 'NOT_SEALED_IN_TIME', r)
      else if (chain.status === 'slashed') deals.markEnded(d.id, 'SLASHED')
      else if (chain.status === 'expired') deals.markEnded(d.id, 'EXPIRED')
    }
  }

  function fail(d: GroupDeal, reason: string, r: TickReport) {
    deals.markFailed(d.id, reason)
    r.failed++
    logger.info({ groupId: d.groupId, provider: d.provider, reason }, 'deal failed; another provider will be asked')
  }

  /** Retrieves one random block of the group from each active deal's provider and checks it against its CID. */
  async function checkRetrievals(r: TickReport) {
    for (const d of deals.inState('active')) {
      if (d.checkedMs !== undefined && now() - d.checkedMs < o.retrievalCheckMs) continue
      const cid = content.sampleBlock(d.groupId)
      if (!cid) continue
      let ok = false
      try {
        const bytes = await withTimeout((signal) => providers.retrieveBlock(d.provider, d.pieceCid, cid, { signal }))
        ok = await blockMatchesCid(cid, bytes)
      } catch {
        ok = false
      }
      if (!ok && d.retrievable) logger.warn({ groupId: d.groupId, provider: d.provider }, 'retrieval check failed')
      deals.recordCheck(d.id, ok)
      r.checked++
    }
  }

  const endsSoon = (d: GroupDeal, head: number) => d.endEpoch - head <= o.renewBeforeEpochs
  /**
   * Live deals that hold (or will soon hold) the group's data for a while:
   * not about to end, and not an active deal whose last retrieval check failed
   * (the provider lost or altered the data). Fewer than `copies`: repair.
   */
  const counting = (groupId: number, head: number) =>
    deals.liveOfGroup(groupId).filter((d) => !endsSoon(d, head) && !(d.state === 'active' && d.checkedMs !== undefined && !d.retrievable))
  /** Copies that can be retrieved now and will last: what offload (and the end of a repair) waits for. */
  const lastingRetrievable = (groupId: number, head: number) =>
    deals.liveOfGroup(groupId).filter((d) => d.state === 'active' && d.retrievable && !endsSoon(d, head)).length
  const transferPending = (groupId: number) => deals.liveOfGroup(groupId).some((d) => d.state === 'proposing' || d.state === 'proposed')

  /** Why the last search for providers for a group found none (the service's reason code). */
  const noProviders = new Map<number, string>()

  /**
   * Whether the client address can pay for the deals it would propose: a
   * verified deal needs DataCap (a provider refuses it otherwise, or it fails
   * at publish), a paid one free market escrow. Checked on every pass, said
   * once in the log when it changes, and shown as the groups' reason.
   */
  let funds: ClientFunds | undefined
  let fundsError: string | undefined
  async function checkFunds(): Promise<void> {
    try {
      funds = await providers.clientFunds(o.clientAddress)
    } catch {
      return // The chain did not answer: keep what we knew.
    }
    const address = o.clientAddress
    const problem = o.terms.verified
      ? funds.dataCap === null
        ? `${address} has no DataCap: it is not a verified client, so its verified deals would be refused (get DataCap from an allocator, or set DEAL_VERIFIED=false and fund escrow)`
        : funds.dataCap === 0n
          ? `the DataCap of ${address} is used up`
          : undefined
      : BigInt(o.terms.pricePerEpoch) > 0n && funds.escrow - funds.locked <= 0n
        ? `${address} has no free storage market escrow for paid deals (add funds with MarketAddBalance)`
        : undefined
    if (problem !== fundsError) {
      if (problem) logger.error({ clientAddress: address }, `no deals are proposed: ${problem}`)
      else logger.info({ clientAddress: address }, 'the client address can pay for deals again')
    }
    fundsError = problem
  }

  async function placeDeals(head: number, r: TickReport) {
    await checkFunds()
    if (fundsError) return
    for (const g of content.groups()) {
      // Only groups whose CAR is on disk can be sent: ready_for_deals, or offloaded ones reloaded for repair.
      const sendable = g.state === 'ready_for_deals' || (g.state === 'reload' && repairs.get(g.id)?.release !== undefined)
      if (!sendable || !g.pieceCid || !g.pieceSize || !g.carSize) continue
      if (o.terms.verified && funds?.dataCap != null && funds.dataCap < BigInt(g.pieceSize)) {
        noProviders.set(g.id, `DATACAP_TOO_LOW (${funds.dataCap} bytes left, the piece is ${g.pieceSize})`)
        continue
      }
      const history = deals.ofGroup(g.id)
      const live = counting(g.id, head)
      const missing = copies - live.length
      if (missing <= 0) continue
      // A provider with any live deal for this piece (even one about to end or failing checks) is not asked again.
      const busy = new Set(deals.liveOfGroup(g.id).map((d) => d.provider))
      // Deals recorded before the proposal epoch was kept: reconstructed from the start epoch.
      const proposedAt = (d: GroupDeal) => d.proposalEpoch ?? d.startEpoch - o.terms.startOffsetEpochs
      const recentlyFailed = new Set(history.filter((d) => d.state === 'failed' && head - proposedAt(d) < retryAfterEpochs).map((d) => d.provider))
      const query = {
        pieceCid: g.pieceCid,
        transferSize: g.carSize,
        duration: o.terms.durationEpochs,
        storagePricePerEpoch: o.terms.pricePerEpoch,
        verifiedDeal: o.terms.verified,
        startEpochHeadOffset: o.terms.startOffsetEpochs,
      }
      let answer = await o.service.bestProviders(query)
      // The service counts deals on chain; it cannot know that one no longer serves the data or ends soon.
      // For such repairs and renewals, ask for any provider that can take the deal.
      if (answer.providers.length === 0 && (answer.reason === 'ONBOARDING_COMPLETED' || answer.reason === 'ONBOARDING_IN_PROGRESS')) {
        answer = await o.service.bestProviders({ ...query, pieceCid: undefined })
      }
      const chosen = answer.providers.filter((p) => !busy.has(p) && !recentlyFailed.has(p)).slice(0, missing)
      if (chosen.length === 0) noProviders.set(g.id, answer.reason ?? (recentlyFailed.size > 0 ? 'RECENTLY_FAILED' : 'NO_PROVIDERS_AVAILABLE'))
      else noProviders.delete(g.id)
      for (const provider of chosen) await propose(g, provider, head, r)
    }
  }

  /**
   * The piece as this provider takes it: padded with zeros up to its minimum
   * piece size (as Lotus clients do), so a 15-byte file can be stored too.
   * Without an ask (no answer) the piece goes as it is.
   */
  async function pieceFor(g: GroupRecord, provider: string): Promise<{ pieceCid: string; pieceSize: number }> {
    const ask = await withTimeout((signal) => providers.ask(provider, { signal })).catch(() => null)
    let pieceSize = g.pieceSize!
    while (ask && pieceSize < ask.minPieceSize) pieceSize *= 2
    return { pieceCid: pieceSize === g.pieceSize ? g.pieceCid! : padPieceCid(g.pieceCid!, g.pieceSize!, pieceSize), pieceSize }
  }

  async function propose(g: GroupRecord, provider: string, head: number, r: TickReport) {
    const token = randomSecret(32)
    const startEpoch = head + o.terms.startOffsetEpochs
    const piece = await pieceFor(g, provider)
    const deal = deals.create({
      groupId: g.id,
      provider,
      pieceCid: piece.pieceCid,
      startEpoch,
      endEpoch: startEpoch + o.terms.durationEpochs,
      tokenHash: sha256Hex(token),
      proposalEpoch: head,
    })
    const proposal = {
      PieceCID: { '/': piece.pieceCid },
      PieceSize: piece.pieceSize,
      VerifiedDeal: o.terms.verified,
      Client: o.clientAddress,
      Provider: provider,
      Label: `group-${g.id}`,
      StartEpoch: deal.startEpoch,
      EndEpoch: deal.endEpoch,
      StoragePricePerEpoch: o.terms.pricePerEpoch,
      ProviderCollateral: '0',
      ClientCollateral: '0',
    }
    const transfer = { dataRoot: content.carRoot(g.id)!, url: `${o.publicUrl()}${TRANSFER_PATH}/${deal.id}`, headers: { Authorization: `Bearer ${token}` }, size: g.carSize! }
    try {
      const answer = await withTimeout((signal) => providers.propose(proposal, transfer, { signal }))
      deals.recordSent(deal.id, { signedProposal: answer.signedProposal, proposalCid: answer.proposalCid, answer: answer.accepted ? 'accepted' : answer.reason })
      if (answer.accepted) {
        deals.markAccepted(deal.id, answer.proposalId)
        r.proposed++
        logger.info({ groupId: g.id, provider, pieceCid: piece.pieceCid, pieceSize: piece.pieceSize }, 'deal proposed')
      } else fail(deal, answer.reason, r)
    } catch {
      fail(deal, 'PROPOSAL_TIMEOUT', r)
    }
  }

  async function offloadGroups(head: number, r: TickReport) {
    for (const g of content.groups()) {
      if (g.state !== 'ready_for_deals' || lastingRetrievable(g.id, head) < copies) continue
      // A provider may still be fetching the CAR.
      if (transferPending(g.id)) continue
      if (await content.offload(g.id)) {
        r.offloaded++
        logger.info({ groupId: g.id, retrievableCopies: g.retrievableCopies }, 'group offloaded: local CAR and blocks removed')
      }
    }
  }

  /**
   * Offloaded groups short of copies (deals expired, slashed, ending soon, or
   * a provider lost the data) are reloaded from a remaining provider, in the
   * background, and held in `reload` with their CAR so new deals can fetch it.
   */
  function startRepairs(head: number, r: TickReport) {
    for (const g of content.groups()) {
      if (g.state !== 'offloaded') continue
      const have = counting(g.id, head).length
      if (have >= copies) continue
      const previous = repairs.get(g.id)
      if (previous && (previous.failedAt === undefined || head - previous.failedAt < retryAfterEpochs)) continue
      const repair: Repair = {}
      repair.pending = content
        .holdForDeals(g.id)
        .then((release) => {
          repair.release = release
          repair.heldSince = head
          logger.info({ groupId: g.id }, 'group reloaded for new deals')
        })
        .catch((err) => {
          repair.failedAt = head
          logger.warn({ err, groupId: g.id }, 'group short of copies could not be reloaded; retrying later')
        })
        .finally(() => (repair.pending = undefined))
      repairs.set(g.id, repair)
      r.repairing++
      logger.info({ groupId: g.id, copies: have, required: copies }, 'offloaded group short of copies: reloading it for new deals')
    }
  }

  /**
   * A held group goes back to offloaded once enough lasting copies are
   * retrievable again, or, so that its bytes do not stay on disk for ever,
   * once it has been held `repairHoldEpochs` (never while a provider is still
   * fetching its CAR); the next reload then waits `retryAfterMs`.
   */
  async function finishRepairs(head: number, r: TickReport) {
    for (const [groupId, repair] of repairs) {
      if (!repair.release || transferPending(groupId)) continue
      const release = repair.release
      if (lastingRetrievable(groupId, head) >= copies) {
        repairs.delete(groupId)
        await release()
        r.repaired++
        logger.info({ groupId, retrievableCopies: lastingRetrievable(groupId, head) }, 'group repaired: back to offloaded')
      } else if (head - repair.heldSince! >= o.repairHoldEpochs) {
        repair.release = undefined
        repair.failedAt = head
        await release()
        r.repairsGivenUp++
        logger.warn({ groupId, retrievableCopies: lastingRetrievable(groupId, head), required: copies }, 'group held for repair too long without its copies: local bytes removed again, retrying later')
      }
    }
  }

  interface Repair {
    /** Set once the group is local with its CAR. */
    release?: () => Promise<void>
    /** Chain head when the group became local. */
    heldSince?: number
    pending?: Promise<void>
    /** Chain head when the reload failed. */
    failedAt?: number
  }
  const repairs = new Map<number, Repair>()
  const stopping = new AbortController()

  let running: Promise<TickReport> | undefined
  let timer: NodeJS.Timeout | undefined
  /** The chain head of the last pass, and why the last search for providers found none, per group: for `reason`. */
  let lastHead: number | undefined
  let serviceError: string | undefined

  async function tickOnce(): Promise<TickReport> {
    const r: TickReport = { proposed: 0, published: 0, activated: 0, failed: 0, checked: 0, offloaded: 0, repairing: 0, repaired: 0, repairsGivenUp: 0 }
    const head = await providers.chainHead()
    lastHead = head
    await followProposals(head, r)
    await followChain(head, r)
    await checkRetrievals(r)
    try {
      if (o.copies === undefined) copies = await o.service.requiredCopies()
      await placeDeals(head, r)
      // Only with the deal service up: a reload is pointless when nothing can be proposed.
      startRepairs(head, r)
      serviceError = undefined
    } catch (err) {
      // Deal service down: nothing new is proposed, everything already placed goes on.
      r.serviceError = (err as Error).message
      serviceError = r.serviceError
    }
    await finishRepairs(head, r)
    await offloadGroups(head, r)
    return r
  }

  deals.failInterrupted()
  const tick = (): Promise<TickReport> => (running ??= tickOnce().finally(() => (running = undefined)))

  return {
    /** One pass over every group and deal; concurrent calls share the running pass. */
    tick,
    /** Where offloaded groups come back from: providers of its active deals, retrievable ones first. */
    remoteSource(): RemoteSource {
      return {
        sources(group) {
          const active = deals.liveOfGroup(group.id).filter((d) => d.state === 'active')
          active.sort((a, b) => Number(b.retrievable) - Number(a.retrievable))
          return active.map((d) => ({
            provider: d.provider,
            // Shutdown aborts reloads too, so that it never waits out a slow provider.
            fetch: () => providers.retrievePiece(d.provider, d.pieceCid, group.carSize!, { signal: AbortSignal.any([AbortSignal.timeout(o.reloadTimeoutMs), stopping.signal]) }),
          }))
        },
      }
    },
    /** The copies currently required per group. */
    requiredCopies: () => copies,
    /** What the engine knows of a group's progress, for the `reason` /file-info gives. */
    progress(groupId: number): DealProgress {
      return {
        head: lastHead,
        copies,
        deals: deals.ofGroup(groupId),
        noProviders: noProviders.get(groupId),
        serviceError,
        fundsError,
        retryAfterEpochs,
        epochSeconds: providers.epochSeconds,
      }
    },
    start(intervalMs: number) {
      const loop = () => {
        tick()
          .then((r) => {
            if (r.serviceError) logger.warn({ err: r.serviceError }, 'deal service unreachable; retrying next tick')
          })
          .catch((err) => logger.error({ err }, 'deal engine tick failed; retrying next tick'))
          .finally(() => {
            if (timer) timer = setTimeout(loop, intervalMs)
          })
      }
      timer = setTimeout(loop, 0)
    },
    async stop() {
      const t = timer
      timer = undefined
      clearTimeout(t)
      await running?.catch(() => undefined)
      // Held groups go back to offloaded (their deals resume on the next start); reloads under way are cut short.
      stopping.abort(new Error('deal engine stopping'))
      await Promise.all([...repairs.values()].map((x) => x.pending))
      for (const [groupId, repair] of repairs) {
        repairs.delete(groupId)
        await repair.release?.().catch((err) => logger.warn({ err, groupId }, 'releasing a held group failed'))
      }
    },
  }
}

export type DealEngine = ReturnType<typeof createDealEngine>
