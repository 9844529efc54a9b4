import type { StorageRoute } from '../route.ts'
import type { RouteContext } from '../types.ts'
import { createAdoption } from './adopt.ts'
import { createChainProblems } from './chain-problems.ts'
import { retireFailedChecks } from './failed-checks.ts'
import { createPdpFunds } from './funding.ts'
import { createPlacer } from './place.ts'
import { pdpProgress } from './progress.ts'
import { createProofFollower } from './proofs.ts'
import { createRemovals } from './removals.ts'
import type { PdpRouteOptions } from './types.ts'
import { createUploads } from './upload.ts'

/**
 * Filecoin Onchain Cloud as a storage route: a group's CAR goes through the
 * Synapse SDK to `copies` PDP providers (the SDK picks them, endorsed ones
 * first; it uploads to one and the others pull from it), its piece is added
 * to our data set on each, and each copy is followed on chain:
 *
 *   proposing (uploading) → proposed (add transaction sent)
 *     → published (piece in the data set) → active (a proof covering it passed)
 *
 * and off that path `failed` (refused, stalled, never proved) or `ended`
 * (data set terminated, piece removed, proving stopped, retrieval check
 * failed once replaced), its piece then removed so it is no longer paid
 * for, or, when its provider is gone, its data set ended by the payer. A
 * copy is recorded (`proposed`) once its provider holds the piece, before
 * any add is sent; after a stop, and before a group is uploaded again, the
 * chain is asked which of our data sets hold its piece: what is there is
 * adopted rather than uploaded again, a piece beyond the copies kept is
 * removed (adopt.ts). A copy's endEpoch is how far the account's
 * funds pay for storage (its runway). Nothing is uploaded that the account
 * cannot pay for. One verb per file beside this one, each owning its
 * state behind a small interface; this file wires them, each given only what it uses.
 */
export function createPdpRoute(c: RouteContext, options: PdpRouteOptions): StorageRoute {
  const { client, copies, clock } = options
  const { epochSeconds } = clock
  const { deals, content, logger, now, fail } = c
  const removals = createRemovals({ deals, logger, now, client, epochSeconds })
  const funds = createPdpFunds({ logger, client, deals, autoDeposit: options.autoDeposit, clock })
  const uploads = createUploads({ deals, content, logger, fail, client, funds, uploadIdleMs: options.uploadIdleMs })
  const adoption = createAdoption({ deals, logger, now, fail, client, removals, copies, epochSeconds, uploading: (id) => !!uploads.of(id) })
  const placer = createPlacer({
    deals,
    content,
    logger,
    now,
    retryAfterEpochs: c.retryAfterEpochs,
    copies,
    maxUploads: options.maxUploads,
    maxUploadBytes: options.maxUploadBytes,
    epochSeconds,
    uploads,
    funds,
    adoption,
  })
  const chain = createChainProblems({ logger })
  const proofs = createProofFollower({ deals, logger, now, fail, client, funds, removals, epochSeconds, pollMs: options.pollMs })
  /** The FEVM chain's head the engine read for the last pass. */
  let lastHead: number | undefined
  const route: StorageRoute = {
    name: 'pdp',
    warm: true,
    required: () => copies,
    // The FEVM chain the copies are proved on, not the deal market's.
    chainHead: () => client.chainHead(),
    // A PDP copy lasts while its payments are funded: that is the funds' runway to watch, not a copy to renew.
    lasting: () => true,
    // A pass is follow then place; what the Onchain Cloud itself refuses, or a node that does not answer, ends its step
    // and is the groups' reason (chain-problems.ts), said once rather than a warning every pass.
    async follow(head, r) {
      // Where the chain is now, for the reasons' "in about …".
      lastHead = head
      chain.begin()
      await chain.step(async () => {
        await proofs.follow(r)
        await retireFailedChecks({ deals, logger, copies, removals })
        await removals.retry()
      })
    },
    async place(head, r, sendable) {
      await chain.step(async () => {
        // Once, before anything else: copies that were being added when a previous process stopped.
        await adoption.resume(r)
        await placer.place(route, head, r, sendable)
      })
      chain.end()
      return true
    },
    transferPending: (groupId, live) =>
      !!uploads.of(groupId) || live.some((d) => d.route === route.name && (d.state === 'proposing' || d.state === 'proposed')),
    async retire(live) {
      let ended = 0
      // Only copies on chain: the engine retires a group once no upload or add of it is under way.
      for (const d of live.filter((x) => x.route === route.name && (x.state === 'published' || x.state === 'active'))) {
        if (!(await deals.markEnded(d.id, { code: 'RETIRED' }))) continue
        ended++
        // Paid once: the removal looks on chain first (scheduled or gone: nothing sent), and after a restart
        // `removals.retry` takes up ended copies whose removal had not gone through.
        await removals.remove(d)
      }
      return { ended, toTerm: 0 }
    },
    progress(groupId, rows) {
      const carSize = placer.oversized(groupId)
      return pdpProgress(
        rows.filter((d) => d.route === route.name),
        {
          copies,
          epochSeconds,
          upload: uploads.of(groupId),
          head: lastHead,
          refused: uploads.refused(groupId),
          oversized: carSize === undefined ? undefined : { carSize, maxUploadBytes: options.maxUploadBytes },
          fundsError: funds.problem()?.words,
          chainProblem: chain.problem(),
          ...placer.heldBack(groupId),
        },
      )
    },
    standing() {
      const runway = funds.runway()
      return {
        ...(runway ? { onchainCloud: runway } : {}),
        pdpPlan: {
          copies,
          why: `PDP_COPIES: ${copies === 1 ? 'a copy' : `${copies} copies`} on Filecoin Onchain Cloud, proved by its provider every proving period and paid in USDFC from Filecoin Pay at the Onchain Cloud's price list`,
        },
      }
    },
    retrieveBlock: (d, cid, signal) => client.retrieveBlock(d.retrievalUrl!, cid, signal),
    retrievePiece: (d, size, signal) => client.retrievePiece(d.retrievalUrl!, size, signal),
    stop: () => uploads.stop(),
  }
  return route
}
