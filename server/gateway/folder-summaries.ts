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

export const groupsKey = (ids: readonly number[]): string => [...ids].sort((a, b) => a - b).join(',')
/** The group ids of a `filesByGroups` key. */
export const groupIdsOfKey = (key: string): number[] => (key ? key.split(',').map(Number) : [])

/** The summaries kept per folder, made and stored on demand, and forgotten when the tree changes. */
export interface FolderSummaries {
  /** Kept, or made now from the folder's direct children (once, however many ask at the same time). */
  summary(path: string): Promise<FolderSummary>
  /** Stores the directory nodes of the folder and every folder below not stored yet; the groups holding them. */
  storedGroups(path: string): Promise<Set<number>>
  /** Something changed at these paths: what they and the folders on their way up had made is made again. */
  forget(paths: string[]): void
  /** Keeps no summary from now on; resolves once none is being made or stored. */
  close(): Promise<void>
}

export interface FolderSummariesOptions {
  namespace: Pick<Namespace, 'get' | 'children'>
  content: Pick<ContentStore, 'groupIdsOfMany' | 'storeDirectory'>
}

/** The path and every folder above it, up to the root. */
const ancestors = (path: string): string[] => {
  const out: string[] = []
  for (let p = path; ; p = parentOf(p)) {
    out.push(p)
    if (p === '/') return out
  }
}

/**
 * Summaries kept per folder. Each is made once however many ask meanwhile,
 * and so are its directory nodes stored; a change bumps the version of every
 * folder on its path, so a summary made across a change is handed to who
 * asked but not kept.
 */
export function createFolderSummaries(o: FolderSummariesOptions): FolderSummaries {
  const summaries = new Map<string, FolderSummary>()
  const making = new Map<string, Promise<FolderSummary>>()
  // Bumped on every change at or below a folder: a summary made across a change is used once, not kept.
  const versions = new Map<string, number>()
  const storing = new Map<string, Promise<Set<number>>>()
  let closed = false

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

  const forget = (paths: string[]) => {
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
  }

  return {
    summary,
    storedGroups,
    forget,
    async close() {
      closed = true
      await Promise.allSettled([...making.values(), ...storing.values()])
    },
  }
}
