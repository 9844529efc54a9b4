import type { Logger } from '../shared/logger.ts'
import type { Sql } from '../shared/sql/index.ts'
import type { ContentStore } from './content/index.ts'
import { directoryDag, type DirectoryLink, type DirectoryNode } from './folder-cid.ts'
import { nameOf, parentOf, type Namespace } from './namespace.ts'

/**
 * What a folder's record needs, kept per folder instead of read from every
 * file below it on each request: its UnixFS CID, and how many files below it
 * sit in each set of groups. A folder's summary is made from its direct
 * children alone (its files, and its sub-folders' summaries), so a change
 * deep down costs one summary per folder on its path, and a record costs the
 * same for 10 files or 100 000.
 *
 * Which groups hold a file's content never changes once it is stored (blocks
 * are linked to groups when written), so a summary goes stale only when the
 * tree changes; group states are read fresh for each record.
 */
export interface FolderSummary {
  cid: string
  dagSize: number
  /** Files below, counted by the groups holding their content (sorted ids joined by ','; '' = not stored yet). */
  filesByGroups: Map<string, number>
  /** This folder's own directory nodes (itself, its HAMT shards), to store; emptied once stored. */
  nodes: DirectoryNode[]
  subfolders: string[]
  /** Groups holding the directory nodes of this folder and of every folder below, once stored. */
  directoryGroups?: Set<number>
}

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

export const groupsKey = (ids: readonly number[]): string => [...ids].sort((a, b) => a - b).join(',')
/** The group ids of a `filesByGroups` key. */
export const groupIdsOfKey = (key: string): number[] => (key ? key.split(',').map(Number) : [])

/**
 * The groups a folder's record is made of: those of every file below it, and
 * those holding its own directory nodes (once the background run stored them;
 * until then, the groups that already hold its CID, if any). A read never writes.
 */
export async function folderGroupIds(summary: FolderSummary, content: Pick<ContentStore, 'groupIdsOfMany'>): Promise<Set<number>> {
  const ids = new Set(summary.directoryGroups ?? (await content.groupIdsOfMany([summary.cid])).get(summary.cid) ?? [])
  for (const key of summary.filesByGroups.keys()) for (const id of groupIdsOfKey(key)) ids.add(id)
  return ids
}

export function createFolderIndex(o: FolderIndexOptions): FolderIndex {
  const summaries = new Map<string, FolderSummary>()
  const making = new Map<string, Promise<FolderSummary>>()
  // Bumped on every change at or below a folder: a summary made across a change is used once, not kept.
  const versions = new Map<string, number>()
  const storing = new Map<string, Promise<Set<number>>>()
  let closed = false
  // The paths each open transaction changed, to tell again once it commits.
  const open = new WeakMap<Sql, string[]>()

  const ancestors = (path: string): string[] => {
    const out: string[] = []
    for (let p = path; ; p = parentOf(p)) {
      out.push(p)
      if (p === '/') return out
    }
  }

  const make = async (path: string): Promise<FolderSummary> => {
    // A macrotask between folders: a run over a big tree leaves room for other requests.
    await new Promise((resolve) => setImmediate(resolve))
    const version = versions.get(path) ?? 0
    const [folder, children] = await Promise.all([o.namespace.get(path), o.namespace.children(path)])
    const links: DirectoryLink[] = []
    const filesByGroups = new Map<string, number>()
    const subfolders: string[] = []
    const add = (key: string, n: number) => filesByGroups.set(key, (filesByGroups.get(key) ?? 0) + n)
    // One folder at a time: a wide tree must not open every sub-folder's queries at once.
    for (const child of children) {
      if (child.kind !== 'dir') continue
      const sub = await summary(child.path)
      links.push({ name: nameOf(child.path), cid: sub.cid, dagSize: sub.dagSize })
      subfolders.push(child.path)
      for (const [key, n] of sub.filesByGroups) add(key, n)
    }
    const files = children.filter((c) => c.kind === 'file')
    const groupIds = await o.content.groupIdsOfMany([...new Set(files.flatMap((f) => (f.cid ? [f.cid] : [])))])
    for (const f of files) {
      // A file still uploading has no content yet: counted, not linked.
      if (!f.cid) {
        add('', 1)
        continue
      }
      links.push({ name: nameOf(f.path), cid: f.cid, dagSize: f.dagSize })
      add(groupsKey(groupIds.get(f.cid) ?? []), 1)
    }
    // The folder's own profile: changing CID_PROFILE never changes the CID of a folder made before.
    const dag = await directoryDag(links, { profile: folder?.cidProfile })
    const made: FolderSummary = { cid: dag.cid, dagSize: dag.dagSize, filesByGroups, nodes: dag.nodes, subfolders }
    if ((versions.get(path) ?? 0) === version && !closed) summaries.set(path, made)
    return made
  }

  const store = async (path: string): Promise<Set<number>> => {
    const s = await summary(path)
    if (s.directoryGroups) return s.directoryGroups
    const groups = new Set<number>()
    for (const sub of s.subfolders) for (const id of await storedGroups(sub)) groups.add(id)
    await o.content.storeDirectory({ cid: s.cid, dagSize: s.dagSize, nodes: s.nodes })
    for (const id of (await o.content.groupIdsOfMany([s.cid])).get(s.cid) ?? []) groups.add(id)
    s.directoryGroups = groups
    // Stored: the bytes need not stay in memory.
    s.nodes = []
    return groups
  }

  function storedGroups(path: string): Promise<Set<number>> {
    const running = storing.get(path)
    if (running) return running
    const pending: Promise<Set<number>> = store(path).finally(() => {
      if (storing.get(path) === pending) storing.delete(path)
    })
    storing.set(path, pending)
    return pending
  }

  function summary(path: string): Promise<FolderSummary> {
    const kept = summaries.get(path)
    if (kept) return Promise.resolve(kept)
    const running = making.get(path)
    if (running) return running
    const pending: Promise<FolderSummary> = make(path).finally(() => {
      if (making.get(path) === pending) making.delete(path)
    })
    making.set(path, pending)
    return pending
  }

  // The background run: one at a time. Changes wait `settleMs` (many PUTs in a row make one run,
  // not one per file). Records never wait for it: they read summaries, which are made on demand.
  let started = false
  let due = false
  let running: Promise<void> | undefined
  let settleTimer: NodeJS.Timeout | undefined
  let retryTimer: NodeJS.Timeout | undefined
  let failures = 0
  const settleMs = o.settleMs ?? 1_000
  const retryMs = o.retryMs ?? 1_000
  const maxRetryMs = o.maxRetryMs ?? 60_000

  const runOnce = async () => {
    // The root holds every folder: made again along the changed paths only (the rest is kept).
    const root = await summary('/')
    // An empty tree has nothing to fetch: no directory node stored for it (a fresh gateway writes nothing).
    if (root.filesByGroups.size === 0 && root.subfolders.length === 0) return
    await storedGroups('/')
  }
  const later = (ms: number) => {
    if (settleTimer || closed) return
    settleTimer = setTimeout(() => {
      settleTimer = undefined
      kick()
    }, ms)
    settleTimer.unref()
  }
  function kick() {
    if (!started || closed || running || retryTimer) return
    clearTimeout(settleTimer)
    settleTimer = undefined
    running = (async () => {
      while (due && !closed) {
        due = false
        try {
          await runOnce()
          if (failures > 0) o.logger?.info({ failures }, 'folder summaries are up to date again')
          failures = 0
        } catch (err) {
          // Logged once per streak of failures, retried with back-off.
          if (failures++ === 0)
            o.logger?.warn({ err }, 'making folder summaries or storing their directory nodes failed; retrying in the background')
          due = true
          retryTimer = setTimeout(
            () => {
              retryTimer = undefined
              kick()
            },
            Math.min(maxRetryMs, retryMs * 2 ** (failures - 1)),
          )
          retryTimer.unref()
          return
        }
        // Changed during the run: again after the settle time.
        if (due) return later(settleMs)
      }
    })().finally(() => {
      running = undefined
    })
  }

  // Due work now, without the settle time, and until none is left (tests, and before sealing by hand).
  const settled = async () => {
    while (started && !closed) {
      if (due && !running && !retryTimer) kick()
      if (!running) return
      await running
    }
  }

  const changed = (paths: string[]) => {
    for (const path of paths) {
      // The path itself, if a folder, and everything below it (a folder removed or moved away).
      for (const kept of [...summaries.keys()])
        if (kept === path || kept.startsWith(path === '/' ? '/' : `${path}/`)) summaries.delete(kept)
      for (const p of ancestors(path)) {
        summaries.delete(p)
        // One being made now started before this change: who asks from now on gets a new one.
        making.delete(p)
        storing.delete(p)
        versions.set(p, (versions.get(p) ?? 0) + 1)
      }
    }
    // After forgetting: the run then makes the changed folders again.
    due = true
    if (!running) later(settleMs)
  }

  const tracking = (ns: Namespace, buffer?: string[]): Namespace => {
    const note = (paths: string[]) => {
      changed(paths)
      buffer?.push(...paths)
    }
    const after = async <T>(run: Promise<T>, paths: string[]): Promise<T> => {
      try {
        return await run
      } finally {
        note(paths)
      }
    }
    return {
      get: (p) => ns.get(p),
      children: (p) => ns.children(p),
      descendants: (p) => ns.descendants(p),
      folderSize: (p) => ns.folderSize(p),
      setModified: (p, ms) => ns.setModified(p, ms),
      instanceId: ns.instanceId,
      putFile: (p, c) => after(ns.putFile(p, c), [p]),
      makeDir: (p) => after(ns.makeDir(p), [p]),
      remove: (p) => after(ns.remove(p), [p]),
      copy: (from, to, deep) => after(ns.copy(from, to, deep), [to]),
      move: (from, to) => after(ns.move(from, to), [from, to]),
      async transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T> {
        const inside: string[] = []
        try {
          return await ns.transaction((tx) => {
            open.set(tx, inside)
            return fn(tx)
          })
        } finally {
          // Again once committed: a summary made from what the transaction had not yet committed is not kept.
          if (inside.length > 0) changed(inside)
        }
      },
      within: (tx) => tracking(ns.within(tx), open.get(tx) ?? buffer),
    }
  }

  return {
    summary,
    settled,
    storedGroups,
    changed,
    start() {
      started = true
      // Summaries now (a data dir from before: the first record need not make them), in the background;
      // directory nodes not stored yet after the settle time, as after a change.
      summary('/').catch((err) => o.logger?.warn({ err }, 'making folder summaries at start failed; made when first asked for'))
      due = true
      later(settleMs)
    },
    tracking: (ns) => tracking(ns),
    async close() {
      closed = true
      clearTimeout(retryTimer)
      clearTimeout(settleTimer)
      await Promise.allSettled([running, ...making.values(), ...storing.values()])
    },
  }
}
