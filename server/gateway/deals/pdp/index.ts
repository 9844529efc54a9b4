import type { StorageRoute } from '../route.ts'
import type { RouteContext } from '../types.ts'
import { adoptInterrupted } from './adopt.ts'
import { createPdpContext } from './context.ts'
import { retireFailedChecks } from './failed-checks.ts'
import { heldBack, placeCopies } from './place.ts'
import { pdpProgress } from './progress.ts'
import { followCopies } from './proofs.ts'
import { retryRemovals } from './removals.ts'
import type { PdpRouteOptions } from './types.ts'

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
 * cannot pay for. One verb per file beside this one.
 */
export function createPdpRoute(c: RouteContext, options: PdpRouteOptions): StorageRoute {
  const p = createPdpContext(c, options)
  const { client } = options
  const route: StorageRoute = {
    name: 'pdp',
    warm: true,
    required: () => options.copies,
    // The FEVM chain the copies are proved on, not the deal market's.
    chainHead: () => client.chainHead(),
    // A PDP copy lasts while its payments are funded: that is the funds' runway to watch, not a copy to renew.
    lasting: () => true,
    async follow(head, r) {
      // Where the chain is now, for the reasons' "in about …".
      p.head = { epoch: head, atMs: p.now() }
      await followCopies(p, r)
      await retireFailedChecks(p)
      await retryRemovals(p)
    },
    async place(head, r, sendable) {
      // Once, before anything else: copies that were being added when a previous process stopped.
      await adoptInterrupted(p, r)
      await placeCopies(p, route, head, r, sendable)
      return true
    },
    transferPending: (groupId, live) =>
      p.uploads.has(groupId) || live.some((d) => d.route === route.name && (d.state === 'proposing' || d.state === 'proposed')),
    progress: (groupId, deals) =>
      pdpProgress(
        deals.filter((d) => d.route === route.name),
        {
          copies: options.copies,
          epochSeconds: options.clock.epochSeconds,
          upload: p.uploads.get(groupId)?.upload,
          head: p.head?.epoch,
          refused: p.refused.get(groupId),
          oversized: p.oversized.has(groupId) ? { carSize: p.oversized.get(groupId)!, maxUploadBytes: options.maxUploadBytes } : undefined,
          fundsError: p.funds.current?.words,
          ...heldBack(p, groupId),
        },
      ),
    standing: () => ({
      ...(p.funding ? { onchainCloud: p.funding } : {}),
      pdpPlan: {
        copies: options.copies,
        why: `PDP_COPIES: ${options.copies === 1 ? 'a copy' : `${options.copies} copies`} on Filecoin Onchain Cloud, proved by its provider every proving period and paid in USDFC from Filecoin Pay at the Onchain Cloud's price list`,
      },
    }),
    retrieveBlock: (d, cid, signal) => client.retrieveBlock(d.retrievalUrl!, cid, signal),
    retrievePiece: (d, size, signal) => client.retrievePiece(d.retrievalUrl!, size, signal),
    async stop() {
      for (const { controller } of p.uploads.values()) controller.abort(new Error('deal engine stopping'))
      // An aborted upload ends at once: its rows fail as stopped, but those whose provider holds the piece wait to be looked up on chain.
      await Promise.all([...p.uploads.values()].map((u) => u.done))
    },
  }
  return route
}
