import type { ContentStore } from '../content/index.ts'
import type { Logger } from '../../shared/logger.ts'
import type { CompactionRows, GroupDeadBytes } from '../retire/compaction-rows.ts'
import { bytes } from '../words.ts'
import type { GroupCopies, RouteHeads } from './copies.ts'
import type { Retirement } from './retire.ts'
import type { TickReport } from './types.ts'

/** What compaction works with besides the engine's stores and copies. */
export interface CompactionOptions {
  rows: CompactionRows
  /** COMPACT_DEAD_FRACTION: share of a group's bytes dead past which it is compacted; 0 or 1: never. */
  deadFraction: number
  /** RETIRE_AFTER_SECONDS, in ms: how long a group stays past the fraction before it is compacted (the undo window). */
  afterMs: number
  content: ContentStore
  copies: GroupCopies
  retirement: Retirement
  logger: Logger
  now: () => number
  /** Every folder's current listing CID. */
  listings: () => Promise<string[]>
  /** Stores these current listings' directory nodes again (their folders' background run). */
  storeListingsAgain: (cids: string[]) => Promise<void>
}

export interface Compaction {
  /** Marks groups mostly dead, starts compactions due, writes live files again in the background, retires groups done. */
  run(heads: RouteHeads, r: TickReport): Promise<void>
  /** Cuts a rewrite under way short and waits for it (it resumes at the next start). */
  stop(): Promise<void>
}

/**
 * Groups whose deleted files make up more than `deadFraction` of their bytes
 * are compacted: once they have been so for the undo window (a restore brings
 * them back under), uploads stop deduplicating against them, their live files
 * are written again (read through the content store, from providers when
 * offloaded, verified) into the writable group, from which they go the normal
 * way (sealed, stored on every route); once every group now holding them has
 * its copies, the old group is retired as a dead one is. Until then it stays
 * live: its copies count, are checked and repaired, and files show them; so
 * there is never a moment with fewer copies than the policy asks. Every step
 * is kept in the store (compaction-rows.ts), so a restart resumes it: a file
 * already written again is not written again, the new groups' copies are
 * the engine's as any group's, and the retirement ends each copy once.
 */
export function createCompaction(o: CompactionOptions): Compaction {
  const { rows, content, copies, logger } = o
  const off = o.deadFraction <= 0 || o.deadFraction >= 1
  // Marking reads every leaf of the groups with copies: at most a few times within the undo window, not every pass.
  const markEveryMs = Math.max(o.afterMs / 24, 1_000)
  let markedMs: number | undefined
  /** Each sparse group's bytes at the last mark, for the log line of its compaction's start. */
  let sparse = new Map<number, GroupDeadBytes>()
  const stopping = new AbortController()
  /** One rewrite at a time, in the background: a group's live files may be gigabytes to fetch and write. */
  let rewriting: { groupId: number; done: Promise<void> } | undefined
  /** Groups whose failed rewrite was logged: once until it succeeds. */
  const failed = new Set<number>()

  async function rewrite(groupId: number, files: Awaited<ReturnType<CompactionRows['toRewrite']>>, listings: string[]): Promise<void> {
    const { signal } = stopping
    for (const [i, f] of files.entries()) {
      signal.throwIfAborted()
      // The same bytes with the same profile: the same CID, its blocks now in the writable group, linked behind this one.
      const got = await content.ingest(content.read(f.cid), { signal, cidProfile: f.cidProfile })
      if (got.cid !== f.cid) throw new Error(`file ${f.cid} written again came out as ${got.cid}`)
      // A large group's rewrite can take long: where it is.
      logger.debug(
        { groupId, cid: f.cid, written: i + 1, of: files.length },
        `compacting group ${groupId}: live file ${i + 1} of ${files.length} written again`,
      )
    }
    if (listings.length > 0) await o.storeListingsAgain(listings)
    failed.delete(groupId)
  }

  function startRewrite(groupId: number, files: Awaited<ReturnType<CompactionRows['toRewrite']>>, listings: string[]): void {
    const done = rewrite(groupId, files, listings)
      .catch((err) => {
        if (stopping.signal.aborted || failed.has(groupId)) return
        failed.add(groupId)
        logger.warn({ err, groupId }, 'writing a compacted group’s live files again failed; retrying next pass')
      })
      .finally(() => (rewriting = undefined))
    rewriting = { groupId, done }
  }

  async function startDue(nowMs: number): Promise<void> {
    for (const groupId of await rows.due(nowMs - o.afterMs)) {
      if (content.inUse(groupId) || !(await rows.start(groupId, nowMs))) continue
      const usage = sparse.get(groupId)
      const liveBytes = usage ? usage.bytes - usage.deadBytes : undefined
      const deadFraction = usage ? Math.round((usage.deadBytes / usage.bytes) * 100) / 100 : undefined
      logger.info(
        { groupId, deadFraction, liveBytes },
        `compacting group ${groupId}: ${deadFraction === undefined ? 'most' : `${Math.round(deadFraction * 100)} %`} of its bytes are deleted files'; its live files${liveBytes === undefined ? '' : ` (${bytes(liveBytes)})`} are written into new groups, and it is retired once those have their copies`,
      )
    }
  }

  /** Writes what is live in the group again, or, once nothing live is left in it and its files' new groups have their copies, retires it. */
  async function advance(groupId: number, heads: RouteHeads, r: TickReport): Promise<void> {
    if (rewriting?.groupId === groupId) return
    const files = await rows.toRewrite(groupId)
    const listed = await o.listings()
    const listings = await rows.listingsIn(groupId, listed)
    if (files.length > 0 || listings.length > 0) {
      if (!rewriting) startRewrite(groupId, files, listings)
      return
    }
    const targets = await rows.targets(groupId)
    for (const t of targets) if (!(await copies.satisfied(t, heads))) return
    const g = await content.group(groupId)
    if (!g) return
    await o.retirement.retireNow(g, r, {
      mark: () => rows.finish(groupId, o.now(), listed),
      why: `group ${groupId} compacted: its live files are in group${targets.length === 1 ? '' : 's'} ${targets.join(', ') || '(none left)'}, stored with their copies; the group is retired`,
      fields: { compacted: true, newGroupIds: targets },
    })
  }

  return {
    async run(heads, r) {
      if (off) return
      const nowMs = o.now()
      if (markedMs === undefined || nowMs - markedMs >= markEveryMs) {
        sparse = new Map((await rows.mark(nowMs, o.deadFraction)).map((g) => [g.groupId, g]))
        markedMs = nowMs
      }
      await startDue(nowMs)
      for (const groupId of await rows.compacting()) await advance(groupId, heads, r)
    },
    async stop() {
      stopping.abort(new Error('compaction stopping'))
      await rewriting?.done
    },
  }
}
