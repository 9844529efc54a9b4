import { createReadStream } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { Readable } from 'node:stream'
import { formatUnits } from 'viem'
import { isNetworkError, timedOut } from '../../network/errors.ts'
import { FocFundsError, type FocCopyProof, type FocStoreEvent } from '../../network/foc/client.ts'
import { EPOCH_SECONDS, EPOCHS_PER_DAY } from '../../shared/epochs.ts'
import { pieceCidV2 } from '../../shared/piece.ts'
import type { GroupRecord } from '../content/index.ts'
import type { EngineContext, GroupDeal, PdpFunding, PdpProgress, PdpRouteOptions, PdpUpload, TickReport } from './types.ts'

/** The Synapse SDK's smallest upload (SIZE_CONSTANTS.MIN_UPLOAD_SIZE): a smaller CAR is sent with zeros after it. */
const MIN_UPLOAD_BYTES = 127
/** Closed proving periods in a row without a proof after which a copy no longer counts: the provider stopped proving. */
const MISSED_PERIODS_LIMIT = 2
/** Proving periods a piece may wait on chain for its first proof before the copy counts as failed. */
const FIRST_PROOF_PERIODS = 3
/** An endEpoch beyond any real runway: ten years, for accounts whose rate is nothing yet. */
const MAX_RUNWAY_EPOCHS = 10 * 365 * EPOCHS_PER_DAY
/** A runway this short is a WARNING (filecoin-pin's threshold). */
const WARNING_RUNWAY_EPOCHS = 14 * EPOCHS_PER_DAY
/** What an automatic top-up brings the runway back to. */
const TOP_UP_RUNWAY_EPOCHS = 30 * EPOCHS_PER_DAY
/** The longest wait between two tries at removing a piece that no longer counts: a day of chain time. */
const REMOVAL_RETRY_MAX_EPOCHS = EPOCHS_PER_DAY
/** How long an add transaction sent before a restart may stay out of a block before its copy is made again (an hour). */
const ADOPT_WAIT_EPOCHS = 120

export interface PdpRoute {
  /** Starts background uploads of sendable groups short of PDP copies, when they can be paid for. */
  place(head: number, r: TickReport, sendable: (g: GroupRecord) => boolean): Promise<void>
  /** Follows each copy on chain: added, proved, proving missed, removed; and how long it is funded. */
  follow(r: TickReport): Promise<void>
  /** What the route knows of a group beyond its rows, for its `reason`. */
  progress(groupId: number): PdpProgress
  /** The account's runway as last read. */
  funding(): PdpFunding | undefined
  /** Cuts uploads short and waits for them to settle. */
  stop(): Promise<void>
}

const providerName = (providerId: number) => `pdp:${providerId}`
const providerIdOf = (provider: string) => Number(provider.slice('pdp:'.length))
/** USDFC has 18 decimals: an amount a person deposits is said in whole cents. */
const CENT = 10n ** 16n
const roundUpToCents = (amount: bigint) => ((amount + CENT - 1n) / CENT) * CENT
const usdfc = (amount: bigint) => `${formatUnits(amount, 18)} USDFC`

/**
 * The PDP storage route: a group's CAR goes through the Synapse SDK to
 * `copies` PDP providers (the SDK picks them, endorsed ones first; it
 * uploads to one and the others pull from it), its piece is added to our
 * data set on each, and each copy is followed on chain:
 *
 *   proposing (uploading) → proposed (add transaction sent)
 *     → published (piece in the data set) → active (a proof covering it passed)
 *
 * and off that path `failed` (refused, stalled, never proved) or `ended`
 * (data set terminated, piece removed, proving stopped). A copy whose add
 * was sent when the process stopped is adopted from its transaction once
 * the chain shows it, rather than uploaded again. A copy's endEpoch
 * is how far the account's funds pay for storage (its runway). Nothing is
 * uploaded that the account cannot pay for.
 */
export function createPdpRoute(c: EngineContext, options: PdpRouteOptions): PdpRoute {
  const { deals, content, logger } = c.o
  const { client } = options
  const uploads = new Map<number, { upload: PdpUpload; done: Promise<void>; controller: AbortController }>()
  const refused = new Map<number, string>()
  const firstProofIn = new Map<number, Map<number, number>>()
  const polledAt = new Map<number, number>()
  /** Copies seen with proofs missing, and the epoch they were first seen so. */
  const missingSince = new Map<number, number>()
  let fundsError: string | undefined
  let funding: PdpFunding | undefined
  let accountReadAt = -Infinity
  let resumed = false
  /** Copies whose add transaction was sent before a restart: adopted from the chain, or failed. */
  const orphans = new Set<number>()
  /** Copies that no longer count whose piece is to be removed from its data set: the next try, and how many failed. */
  const removals = new Map<number, { tries: number; atMs: number }>()
  let removalsSwept = false
  /** Chain time since a row last changed, on this network's epochs. */
  const epochsSince = (d: GroupDeal) => (c.now() - d.updatedMs) / 1000 / c.o.providers.epochSeconds
  // Chain time, like the engine's other waits: a sped-up simulated network asks as often per epoch as a real one.
  const pollMs = (c.o.statusPollMs * c.o.providers.epochSeconds) / EPOCH_SECONDS
  c.uploading = (groupId) => uploads.has(groupId)

  function setFundsError(problem: string | undefined): void {
    if (problem !== fundsError) {
      if (problem) logger.error({ payer: client.address }, `no PDP uploads: ${problem}`)
      else if (fundsError) logger.info({ payer: client.address }, 'the account can pay for PDP uploads again')
    }
    fundsError = problem
  }

  /** Whether the account can pay for `bytes` more: topped up from the wallet when allowed, else the reason says what to deposit. */
  async function canPay(bytes: number): Promise<boolean> {
    const funding = await client.funding(bytes)
    if (funding.ready) {
      setFundsError(undefined)
      return true
    }
    // What the SDK asks for covers the moment it was asked: payments run on while the copies are made, and a
    // second data set whose lockup no longer fits is refused on chain. A tenth more and a day of the new rate.
    const amount = roundUpToCents(funding.depositNeeded + funding.depositNeeded / 10n + funding.ratePerEpoch * BigInt(EPOCHS_PER_DAY))
    if (!options.autoDeposit) {
      setFundsError(
        `no funds: deposit USDFC: storing needs ${usdfc(amount)} more in Filecoin Pay${funding.needsApproval ? ', and the warm storage service approved,' : ''} before anything is uploaded (npm run wallet -- deposit ${formatUnits(amount, 18)} USDFC)`,
      )
      return false
    }
    return deposit(amount, 'deposited USDFC into Filecoin Pay for PDP uploads', '')
  }

  /** Deposits `amount` from the wallet; when it holds too little, nothing is uploaded and the reason says so. */
  async function deposit(amount: bigint, done: string, why: string): Promise<boolean> {
    try {
      const hash = await client.fund(amount)
      logger.info({ amount: usdfc(amount), hash }, done)
      setFundsError(undefined)
      return true
    } catch (err) {
      if (!(err instanceof FocFundsError)) throw err
      setFundsError(`no funds: deposit USDFC: ${why}${err.message}`)
      return false
    }
  }

  /**
   * A copy whose add transaction was sent before a restart, looked up on
   * chain: kept if the transaction added the piece, failed (and made again)
   * if it did not, or once it stayed out of a block for ADOPT_WAIT_EPOCHS.
   */
  async function adopt(id: number, r: TickReport): Promise<void> {
    const d = await deals.get(id)
    if (!d || (d.state !== 'proposed' && d.state !== 'published')) {
      orphans.delete(id)
      return
    }
    const txHash = d.proposalId?.startsWith('0x') ? (d.proposalId as `0x${string}`) : undefined
    const outcome = txHash
      ? await client.addedCopy({ txHash, providerId: providerIdOf(d.provider), pieceCid: d.pieceCid }).catch((err: unknown) => {
          logger.warn({ err, groupId: d.groupId, provider: d.provider }, 'looking up an interrupted PDP add failed; asking again later')
          return { status: 'pending' as const }
        })
      : { status: 'failed' as const }
    if (outcome.status === 'pending' && epochsSince(d) < ADOPT_WAIT_EPOCHS) return
    orphans.delete(id)
    if (outcome.status !== 'added') {
      await c.fail(d, 'INTERRUPTED', r)
      return
    }
    const { copy } = outcome
    if (d.state === 'proposed') await deals.markPublished(d.id, Number(copy.dataSetId))
    await deals.recordPdpCopy(d.id, {
      dataSetId: Number(copy.dataSetId),
      pieceId: Number(copy.pieceId),
      addedEpoch: copy.addedEpoch,
      retrievalUrl: copy.retrievalUrl,
    })
    r.published++
    logger.info(
      { groupId: d.groupId, provider: d.provider, dataSetId: Number(copy.dataSetId), pieceId: Number(copy.pieceId) },
      'PDP copy adopted after a restart: its add went through on chain',
    )
  }

  /** PDP copies in a data set on chain (or being added to one), proved or not yet. */
  async function copiesOnChain(): Promise<GroupDeal[]> {
    return [...(await deals.inState('published', 'pdp')), ...(await deals.inState('active', 'pdp'))]
  }

  /** The CAR as the SDK takes it: streamed from disk, or whole and padded with zeros when under its minimum. */
  async function carSource(path: string, carSize: number): Promise<Uint8Array | ReadableStream<Uint8Array>> {
    if (carSize >= MIN_UPLOAD_BYTES) return Readable.toWeb(createReadStream(path)) as ReadableStream<Uint8Array>
    const bytes = new Uint8Array(MIN_UPLOAD_BYTES)
    bytes.set(await readFile(path))
    return bytes
  }

  async function upload(g: GroupRecord, copies: number, exclude: number[], head: number, r: TickReport): Promise<void> {
    const path = await content.carFile(g.id)
    if (!path) return
    const size = Math.max(g.carSize!, MIN_UPLOAD_BYTES)
    const pieceCid = pieceCidV2(g.pieceCid!, size)
    const root = await content.carRoot(g.id)
    const state: PdpUpload = { copies, bytes: 0, total: size, adding: 0 }
    const controller = new AbortController()
    // One row per provider that got the piece, made when the SDK first names it.
    const rows = new Map<number, Promise<GroupDeal>>()
    const row = (providerId: number) =>
      rows.get(providerId) ??
      rows
        .set(
          providerId,
          deals.create({
            groupId: g.id,
            route: 'pdp',
            provider: providerName(providerId),
            pieceCid,
            startEpoch: head,
            endEpoch: head,
            proposalEpoch: head,
          }),
        )
        .get(providerId)!
    // The SDK's callbacks cannot wait: what they record is awaited before the result is.
    const recorded: Promise<unknown>[] = []
    const record = (work: () => Promise<unknown>) =>
      recorded.push(work().catch((err) => logger.warn({ err, groupId: g.id }, 'recording a PDP upload step failed')))
    // An upload that makes no progress for uploadIdleMs (no bytes taken, no step on chain) has stalled.
    const stalled = new AbortController()
    let idle: NodeJS.Timeout | undefined
    const touch = () => {
      clearTimeout(idle)
      idle = setTimeout(() => stalled.abort(timedOut(`no progress in ${options.uploadIdleMs / 1000} s`)), options.uploadIdleMs)
    }
    touch()
    /** Providers whose add transaction is recorded: on a stop, those rows wait to be adopted. */
    const sent = new Set<number>()
    const onProgress = (e: FocStoreEvent) => {
      touch()
      if (e.kind === 'uploaded') state.bytes = e.bytes
      else if (e.kind === 'stored') record(() => row(e.providerId))
      else if (e.kind === 'adding') {
        state.adding++
        record(async () => {
          await deals.markAccepted((await row(e.providerId)).id, e.txHash)
          sent.add(e.providerId)
        })
      } else if (e.kind === 'added') record(async () => deals.markPublished((await row(e.providerId)).id, Number(e.dataSetId)))
    }
    const done = (async () => {
      try {
        const stored = await client.store(await carSource(path, g.carSize!), {
          copies,
          excludeProviderIds: exclude,
          metadata: { withIPFSIndexing: '' },
          ...(root ? { pieceMetadata: { ipfsRootCID: root } } : {}),
          pieceCid,
          signal: AbortSignal.any([controller.signal, stalled.signal]),
          onProgress,
        })
        await Promise.all(recorded)
        for (const copy of stored.copies) {
          const d = await row(copy.providerId)
          await deals.markAccepted(d.id, `pdp-${copy.dataSetId}-${copy.pieceId}`)
          await deals.markPublished(d.id, Number(copy.dataSetId))
          await deals.recordPdpCopy(d.id, {
            dataSetId: Number(copy.dataSetId),
            pieceId: Number(copy.pieceId),
            addedEpoch: copy.addedEpoch,
            retrievalUrl: copy.retrievalUrl,
          })
          r.published++
        }
        const failures = stored.failures.map((f) => `${providerName(f.providerId)}: ${f.reason}`)
        for (const f of stored.failures) await c.fail(await row(f.providerId), `PROVIDER_REFUSED: ${f.reason}`, r)
        if (stored.copies.length > 0) refused.delete(g.id)
        if (failures.length > 0) refused.set(g.id, failures.join('; '))
        logger.info(
          { groupId: g.id, pieceCid, copies: stored.copies.map((x) => providerName(x.providerId)), failures },
          'group stored on PDP providers',
        )
      } catch (err) {
        const why = controller.signal.aborted
          ? 'INTERRUPTED'
          : isNetworkError(err, 'TIMED_OUT')
            ? `UPLOAD_STALLED: ${(err as Error).message}`
            : `PROVIDER_REFUSED: ${(err as Error).message}`
        const failedProvider = isNetworkError(err) && err.provider !== undefined ? Number(err.provider) : undefined
        await Promise.all(recorded)
        // The provider that failed gets a failed row too, so that it is not asked again for a while.
        if (failedProvider !== undefined) await row(failedProvider)
        for (const [providerId, d] of rows) {
          // Stopped while its add was on the way: the next start adopts it from the chain.
          if (why === 'INTERRUPTED' && sent.has(providerId)) continue
          await c.fail(await d, why, r)
        }
        refused.set(g.id, `${failedProvider !== undefined ? `${providerName(failedProvider)} ` : ''}${why}`)
        if (err instanceof FocFundsError) setFundsError(`no funds: deposit USDFC: ${err.message}`)
        logger.warn({ err, groupId: g.id }, 'PDP upload failed; trying again on a later pass')
      } finally {
        clearTimeout(idle)
      }
    })()
    uploads.set(g.id, { upload: state, controller, done: done.finally(() => uploads.delete(g.id)) })
  }

  /** Keeps the account's runway, and says in the log when it turns short or runs out (once per change). */
  function noteFunding(now: PdpFunding): void {
    if (now.status !== (funding?.status ?? 'HEALTHY')) {
      const days = Math.floor(now.runwayEpochs / EPOCHS_PER_DAY)
      if (now.status === 'HEALTHY')
        logger.info({ payer: client.address, funds: usdfc(now.funds) }, 'the Onchain Cloud account is funded again')
      else
        logger.warn(
          { payer: client.address, funds: usdfc(now.funds), runwayDays: days },
          now.status === 'DEFICIT'
            ? 'the Onchain Cloud account no longer pays for the PDP copies: deposit USDFC'
            : `the Onchain Cloud account pays for the PDP copies for ${days} more days: deposit USDFC`,
        )
    }
    funding = now
  }

  /**
   * With automatic deposits, a runway turned short is brought back to
   * TOP_UP_RUNWAY_EPOCHS from the wallet (before deficit: a rail a provider
   * terminated in deficit does not come back).
   */
  async function topUp(lockupRatePerEpoch: bigint, availableFunds: bigint): Promise<void> {
    const amount = roundUpToCents(lockupRatePerEpoch * BigInt(TOP_UP_RUNWAY_EPOCHS) - availableFunds)
    if (amount > 0n)
      await deposit(
        amount,
        'deposited USDFC into Filecoin Pay: the PDP copies are paid for 30 more days',
        "the PDP copies' funds run short, and ",
      )
  }

  /**
   * A copy that no longer counts is no longer paid for: its provider is
   * asked to remove its piece from the data set, unless the chain shows it
   * gone or already scheduled. A failure (the provider that stopped proving
   * may not answer) is tried again later, with back-off up to a day of chain
   * time.
   */
  async function removeCopy(d: GroupDeal): Promise<void> {
    const copy = { providerId: providerIdOf(d.provider), dataSetId: BigInt(d.dataSetId!), pieceId: BigInt(d.pieceId!) }
    const tries = removals.get(d.id)?.tries ?? 0
    try {
      if ((await client.removalState(copy)) === 'live') {
        const hash = await client.removeCopy(copy)
        logger.info(
          { groupId: d.groupId, provider: d.provider, dataSetId: d.dataSetId, pieceId: d.pieceId, hash },
          'PDP copy removed from its data set: no longer paid for',
        )
      }
      removals.delete(d.id)
    } catch (err) {
      const waitEpochs = Math.min(REMOVAL_RETRY_MAX_EPOCHS, 10 * 2 ** tries)
      removals.set(d.id, { tries: tries + 1, atMs: c.now() + waitEpochs * c.o.providers.epochSeconds * 1000 })
      // Said once; later tries only when they succeed.
      if (tries === 0)
        logger.warn(
          { err, groupId: d.groupId, provider: d.provider, dataSetId: d.dataSetId, pieceId: d.pieceId },
          'removing a PDP copy that no longer counts failed; trying again later (it is paid for until then)',
        )
    }
  }

  /** Removals to try now: failed ones whose wait is over, and, once after a start, every copy that ended with its piece on chain. */
  async function retryRemovals(): Promise<void> {
    if (!removalsSwept) {
      removalsSwept = true
      for (const d of [...(await deals.inState('ended', 'pdp')), ...(await deals.inState('failed', 'pdp'))]) {
        if (d.pieceId !== undefined && !removals.has(d.id)) removals.set(d.id, { tries: 0, atMs: 0 })
      }
    }
    for (const [id, next] of removals) {
      if (next.atMs > c.now()) continue
      const d = await deals.get(id)
      if (d?.dataSetId === undefined || d.pieceId === undefined) removals.delete(id)
      else await removeCopy(d)
    }
  }

  /** Records what the chain says of one copy; moves it on, or out. */
  async function followCopy(d: GroupDeal, proof: FocCopyProof, head: number, endEpoch: number, r: TickReport): Promise<void> {
    const due = firstProofIn.get(d.groupId) ?? firstProofIn.set(d.groupId, new Map()).get(d.groupId)!
    due.delete(d.id)
    if (!proof.dataSetLive || !proof.pieceLive) {
      const why = proof.dataSetLive ? 'PIECE_REMOVED' : 'DATA_SET_TERMINATED'
      if (d.state === 'active') await deals.markEnded(d.id, why)
      else await c.fail(d, why, r)
      return
    }
    await deals.recordProof(d.id, { lastProofEpoch: proof.proved ? proof.lastProvenEpoch : undefined, endEpoch })
    if (d.state === 'published') {
      if (proof.proved) {
        if (await deals.markActive(d.id)) r.activated++
      } else if (head > d.addedEpoch! + FIRST_PROOF_PERIODS * proof.maxProvingPeriod + proof.challengeWindow) {
        await c.fail(d, `NEVER_PROVED: no proof in ${FIRST_PROOF_PERIODS} proving periods since the piece was added`, r)
        await removeCopy(d)
      } else if (proof.nextChallengeEpoch !== null) due.set(d.id, proof.nextChallengeEpoch - head)
    } else if (proof.missedPeriods < MISSED_PERIODS_LIMIT) missingSince.delete(d.id)
    else if (!missingSince.has(d.id)) {
      // Seen missing for the first time (this gateway, or the provider, may just be back from a stop): one
      // more proving period to prove again before the copy stops counting.
      missingSince.set(d.id, head)
      logger.warn(
        { groupId: d.groupId, provider: d.provider, missedPeriods: proof.missedPeriods },
        'PDP provider missed its proofs; the copy stops counting if it misses the next period too',
      )
    } else if (head - missingSince.get(d.id)! >= proof.maxProvingPeriod) {
      missingSince.delete(d.id)
      await deals.markEnded(d.id, `MISSED_PROOFS: ${proof.missedPeriods} proving periods in a row without a proof`)
      logger.warn(
        { groupId: d.groupId, provider: d.provider, missedPeriods: proof.missedPeriods },
        'PDP provider stopped proving; another copy will be made',
      )
      await removeCopy(d)
    }
  }

  return {
    progress: (groupId) => ({
      copies: options.copies,
      upload: uploads.get(groupId)?.upload,
      firstProofIn: firstProofIn.get(groupId) ?? new Map(),
      refused: refused.get(groupId),
      fundsError,
    }),
    funding: () => funding,

    async place(head, r, sendable) {
      // Once, before anything else: copies that were being added when a previous process stopped.
      if (!resumed) {
        for (const d of [...(await deals.inState('proposed', 'pdp')), ...(await deals.inState('published', 'pdp'))]) {
          if (d.pieceId === undefined) orphans.add(d.id)
        }
        resumed = true
      }
      for (const id of orphans) await adopt(id, r)
      // Uploads side by side would each create their own data set on the same providers while none exists yet,
      // and the lockup of the second no longer fits (seen on npm start with a 200 MiB file: "execution reverted").
      // Once the account has data sets on enough providers, the SDK adds to them and uploads may run together.
      const onChain = (await copiesOnChain()).filter((d) => d.dataSetId !== undefined)
      const concurrent = new Set(onChain.map((d) => d.provider)).size >= options.copies ? options.maxUploads : 1
      for (const g of await content.groups()) {
        if (uploads.size >= concurrent) break
        if (uploads.has(g.id) || !sendable(g) || !g.pieceCid || !g.carSize) continue
        const missing = options.copies - (await c.counting(g.id, head, 'pdp')).length
        if (missing <= 0) continue
        // Paid for together with the uploads under way, which the account has not yet locked funds for.
        const pending = [...uploads.values()].reduce((sum, u) => sum + u.upload.total, 0)
        if (!(await canPay(g.carSize + pending))) return
        const history = (await deals.ofGroup(g.id)).filter((d) => d.route === 'pdp')
        const live = new Set((await deals.liveOfGroup(g.id)).filter((d) => d.route === 'pdp').map((d) => d.provider))
        // A provider that failed a copy (or stopped keeping one) is not asked again for a while, counted from then.
        const recent = history
          .filter((d) => (d.state === 'failed' || d.state === 'ended') && epochsSince(d) < c.retryAfterEpochs)
          .map((d) => d.provider)
        const exclude = [...new Set([...live, ...recent])].map(providerIdOf)
        logger.info({ groupId: g.id, copies: missing, exclude }, 'uploading group to PDP providers')
        await upload(g, missing, exclude, head, r)
      }
    },

    async follow(r) {
      const copies = (await copiesOnChain()).filter((d) => d.pieceId !== undefined)
      for (const id of polledAt.keys()) if (!copies.some((d) => d.id === id)) polledAt.delete(id)
      for (const id of missingSince.keys()) if (!copies.some((d) => d.id === id)) missingSince.delete(id)
      const due = copies.filter((d) => c.now() - (polledAt.get(d.id) ?? -Infinity) >= pollMs)
      if (due.length === 0 && c.now() - accountReadAt < pollMs) return
      const account = await client.account()
      accountReadAt = c.now()
      const head = Number(account.epoch)
      const runway = Number(account.runwayEpochs > BigInt(MAX_RUNWAY_EPOCHS) ? BigInt(MAX_RUNWAY_EPOCHS) : account.runwayEpochs)
      const endEpoch = head + runway
      noteFunding({
        status:
          account.lockupRatePerEpoch > 0n && account.availableFunds <= 0n
            ? 'DEFICIT'
            : account.lockupRatePerEpoch > 0n && runway <= WARNING_RUNWAY_EPOCHS
              ? 'WARNING'
              : 'HEALTHY',
        funds: account.funds,
        runwayEpochs: runway,
        fundedUntilMs: Date.now() + runway * c.o.providers.epochSeconds * 1000,
      })
      if (options.autoDeposit && funding!.status !== 'HEALTHY') await topUp(account.lockupRatePerEpoch, account.availableFunds)
      for (const d of due) {
        polledAt.set(d.id, c.now())
        const proof = await client
          .copyProof({ dataSetId: BigInt(d.dataSetId!), pieceId: BigInt(d.pieceId!), addedEpoch: d.addedEpoch! })
          .catch((err) => {
            logger.warn({ err, groupId: d.groupId, provider: d.provider }, 'reading a PDP copy on chain failed; asking again later')
            return undefined
          })
        if (proof) await followCopy(d, proof, head, endEpoch, r)
      }
      await retryRemovals()
    },

    async stop() {
      for (const { controller } of uploads.values()) controller.abort(new Error('deal engine stopping'))
      // An aborted upload ends at once: its rows fail as interrupted, but those whose add was sent wait to be adopted.
      await Promise.all([...uploads.values()].map((u) => u.done))
    },
  }
}
