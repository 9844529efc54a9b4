import { blockMatchesCid } from '../content/verify-block.ts'
import { createNote, type Note } from './note.ts'
import type { StorageRoute } from './route.ts'
import type { DealStore, GroupDeal, RouteContext, TickReport } from './types.ts'

/** Copies of other providers checked, when every due check of a round failed, to tell a lost provider from our own outage. */
const MAX_CONTROLS = 3

/**
 * The failure-rate rule beside the one of failures in a row: 5 failures among a copy's last 20 checks that passed
 * or were blamed (below 75 % answered) stop it counting. Dealbot approves a provider for Filecoin Onchain Cloud
 * only at 97 % of retrievals or more over at least 200 (probelab.io/filecoin/foc/methodology/approval-criteria);
 * one copy is judged on far fewer checks, so the bar is lower and the window full before it applies: at the
 * default of a check every 10 minutes, 20 checks are 3 h 20 min.
 */
export const CHECK_WINDOW = { window: 20, failedInWindow: 5 } as const

export interface RetrievalChecks {
  /**
   * Checks each active copy whose check is due: one random block of its
   * group from its provider, on its route, against the block's CID.
   */
  run(r: TickReport): Promise<void>
}

/**
 * Retrieval checks that blame a provider only on evidence. A round's failed
 * checks count against their providers when some provider could be
 * reached: a check of the round passed, or, when none did, a copy of
 * another provider checked as a control passes. When nothing could be
 * reached (our network, a firewall, a DNS outage) the copies show as not
 * retrievable, but no one is blamed and no copy stops counting. A copy
 * stops counting only after `stopAfter` checks in a row failed so, or a
 * quarter of its last 20 (CHECK_WINDOW), never on one failure: checks are
 * `retrievalCheckMs` apart, so that spans at least (stopAfter − 1) ×
 * retrievalCheckMs. Passes make it count again once neither rule holds.
 */
export function createRetrievalChecks(
  c: Pick<RouteContext, 'content' | 'logger' | 'now' | 'withTimeout'> & {
    deals: DealStore
    retrievalCheckMs: number
    /** Failed checks in a row, each blamed on the provider, after which a copy stops counting (RETRIEVAL_FAILED_CHECKS). */
    stopAfter: number
  },
  routeOf: (name: string) => StorageRoute,
): RetrievalChecks {
  const rule = { inARow: c.stopAfter, ...CHECK_WINDOW }
  // "Nothing could be reached" is said once when it starts and once when it ends, not every round.
  const outage: Note<true> = createNote({
    key: () => 'outage',
    said: () =>
      c.logger.warn('every retrieval check of this round failed, on every provider: no provider is blamed, no copy stops counting'),
    cleared: () => c.logger.info('retrieval checks reach providers again'),
  })

  /** Whether one block of the copy's group comes back from its provider, intact. */
  async function retrieves(d: GroupDeal): Promise<boolean | undefined> {
    const cid = await c.content.sampleBlock(d.groupId)
    if (!cid) return undefined
    try {
      const bytes = await c.withTimeout((signal) => routeOf(d.route).retrieveBlock(d, cid, signal))
      return await blockMatchesCid(cid, bytes)
    } catch {
      return false
    }
  }

  /** Whether a copy of a provider not among `failed` passes a check (at most MAX_CONTROLS tried): something can be reached. */
  async function reachesAnother(active: readonly GroupDeal[], failed: ReadonlySet<string>): Promise<boolean> {
    const tried = new Set(failed)
    for (const d of active) {
      if (tried.size - failed.size >= MAX_CONTROLS) break
      if (tried.has(d.provider)) continue
      tried.add(d.provider)
      if ((await retrieves(d)) === true) {
        await c.deals.recordCheck(d.id, 'passed', rule)
        return true
      }
    }
    return false
  }

  return {
    async run(r) {
      const active = await c.deals.inState('active')
      const results: { d: GroupDeal; ok: boolean }[] = []
      for (const d of active) {
        if (d.checkedMs !== undefined && c.now() - d.checkedMs < c.retrievalCheckMs) continue
        const ok = await retrieves(d)
        if (ok === undefined) continue
        results.push({ d, ok })
        r.checked++
      }
      const failed = results.filter((x) => !x.ok)
      const blame =
        failed.length === 0 || results.some((x) => x.ok) || (await reachesAnother(active, new Set(failed.map((x) => x.d.provider))))
      outage.set(blame ? undefined : true)
      for (const { d, ok } of results) {
        if (ok) await c.deals.recordCheck(d.id, 'passed', rule)
        else if (!blame) await c.deals.recordCheck(d.id, 'unsure')
        else await recordFailure(d)
      }
    },
  }

  async function recordFailure(d: GroupDeal): Promise<void> {
    const standing = await c.deals.recordCheck(d.id, 'failed', rule)
    if (!standing) return
    const fields = {
      groupId: d.groupId,
      provider: d.provider,
      route: d.route,
      failedChecks: standing.inARow,
      failedOfLastChecks: `${standing.failedInWindow}/${standing.checks}`,
    }
    if (standing.stoppedNow)
      c.logger.warn(
        fields,
        standing.inARow >= c.stopAfter
          ? 'retrieval checks failed in a row while other providers answered: the copy no longer counts and is replaced'
          : `${standing.failedInWindow} of the copy's last ${standing.checks} retrieval checks failed while other providers answered: the copy no longer counts and is replaced`,
      )
    else if (standing.inARow === 1 && d.checkFailedMs === undefined)
      c.logger.warn(fields, `retrieval check failed; the copy still counts until ${c.stopAfter} fail in a row`)
  }
}
