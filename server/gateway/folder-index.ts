import type { Logger } from '../shared/logger.ts'
import type { ContentStore } from './content/index.ts'
import { createFolderRuns } from './folder-runs.ts'
import { createFolderSummaries, groupIdsOfKey, type FolderSummary } from './folder-summaries.ts'
import { changeTracking } from './folder-tracking.ts'
import type { Namespace } from './namespace.ts'

export { groupIdsOfKey, groupsKey, type FolderSummary } from './folder-summaries.ts'

export interface FolderIndex {
  /**
   * The folder's summary: kept, or made now from its direct children and its
   * sub-folders' summaries (once, however many ask at the same time). Reads
   * only: `directoryGroups` is set once the background run stored the nodes.
   */
  summary(path: string): Promise<FolderSummary>
  /**
   * Stores the directory nodes of the folder and every folder below not
   * stored yet (so every CID a record names can be fetched from providers),
   * and answers the groups holding them. The background run's job.
   */
  storedGroups(path: string): Promise<Set<number>>
  /** Something changed at these paths: the folders on their way up are made again. */
  changed(paths: string[]): void
  /**
   * Starts the background work: every folder's summary now (e.g. an existing
   * data dir after a restart), a run storing directory nodes after the settle
   * time, and again after each change, one run at a time.
   */
  start(): void
  /** Resolves once no background work is due (due work runs now, without waiting the settle time). */
  settled(): Promise<void>
  /**
   * The namespace that tells this index what it changes; also after its
   * transactions commit, so a summary made meanwhile is not kept.
   */
  tracking(namespace: Namespace): Namespace
  close(): Promise<void>
}

export interface FolderIndexOptions {
  namespace: Namespace
  content: ContentStore
  /** Where a failing background run says so (once until it succeeds again); silent without it. */
  logger?: Logger
  /** How long after a change the background run waits for more (default 1 s). */
  settleMs?: number
  /** Back-off after a failed background run, doubling up to `maxRetryMs` (defaults 1 s, 60 s). */
  retryMs?: number
  maxRetryMs?: number
}

/**
 * The groups a folder's record is made of: those of every file below it, and
 * those holding its own directory nodes (once the background run stored them;
 * until then, the groups that already hold its CID, if any). A read never writes.
 */
/**
 * The groups whose state a folder shows: those of the files below it. A
 * folder's own directory nodes are rewritten on every change below it (a
 * rename, a new file), into a fresh group that stays staging for minutes; its
 * files are no less safe meanwhile, so that group is a detail of the record
 * (a group of 0 files, with its reason), not its state. A folder with no file
 * below it shows its directory nodes' groups (`all`).
 */
export function stateGroupIds(summary: FolderSummary, all: ReadonlySet<number>): Set<number> {
  const ids = new Set<number>()
  for (const key of summary.filesByGroups.keys()) for (const id of groupIdsOfKey(key)) ids.add(id)
  return ids.size > 0 ? ids : new Set(all)
}

export async function folderGroupIds(summary: FolderSummary, content: Pick<ContentStore, 'groupIdsOfMany'>): Promise<Set<number>> {
  const ids = new Set(summary.directoryGroups ?? (await content.groupIdsOfMany([summary.cid])).get(summary.cid) ?? [])
  for (const key of summary.filesByGroups.keys()) for (const id of groupIdsOfKey(key)) ids.add(id)
  return ids
}

/**
 * Folder summaries (folder-summaries.ts), kept up to date by a background run
 * (folder-runs.ts) that the namespaces this index tracks (folder-tracking.ts)
 * tell of every change.
 */
export function createFolderIndex(o: FolderIndexOptions): FolderIndex {
  const summaries = createFolderSummaries({ namespace: o.namespace, content: o.content })
  const runs = createFolderRuns({
    summaries,
    logger: o.logger,
    settleMs: o.settleMs ?? 1_000,
    retryMs: o.retryMs ?? 1_000,
    maxRetryMs: o.maxRetryMs ?? 60_000,
  })
  const changed = (paths: string[]) => {
    summaries.forget(paths)
    // After forgetting: the run then makes the changed folders again.
    runs.due()
  }

  return {
    summary: summaries.summary,
    settled: runs.settled,
    storedGroups: summaries.storedGroups,
    changed,
    start: runs.start,
    tracking: changeTracking(changed),
    async close() {
      await Promise.all([runs.close(), summaries.close()])
    },
  }
}
