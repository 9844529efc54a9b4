/**
 * Keeps a listed folder's badges and menus in step with its files while the
 * list is on screen (issue 38): the Files app draws a row once, and asks an
 * action whether it applies once, when it draws it, often before the
 * folder's answer came. So, for each folder with badges on the page, the
 * folder's states are asked again at the sidebar tab's pace (one request for
 * the rows shown, through FolderStates), each badge is redrawn in place
 * when its entry changes, and the Files app is told the node changed
 * (`files:node:updated`, which Nextcloud documents for exactly that) so that
 * it draws the row again and asks its actions anew; so it is too when the
 * first answer comes after the row was drawn.
 */
import type { FolderEntry, FolderStates, ListedFolder } from './folder-states.ts'

import { REFRESH_INTERVAL_MS } from '../utils/pace.ts'
import { renderBadge } from './badge.ts'

/** What of a Files node is followed (actions.ts's ListNode has it; not imported from there, which imports this). */
export interface ListNode {
  path: string
  dirname: string
  basename: string
}

export interface LiveBadgesDeps {
  states: FolderStates
  /** Tells the Files app a node's data changed: it draws its row again (and asks its actions again). */
  nodeUpdated: (node: ListNode) => void
  intervalMs?: number
  /** Whether anyone can see the page: a hidden one is not polled. */
  visible?: () => boolean
  setTimer?: (run: () => void, ms: number) => unknown
}

export interface LiveBadges {
  /** A row's node was asked about (by `enabled`); `answered`: whether its folder's answer was known then. */
  seen(node: ListNode, answered: boolean): void
  /** A badge drawn for a node, to be redrawn when its entry changes. */
  drawn(node: ListNode, badge: HTMLElement): void
}

interface Watched {
  nodes: Map<string, ListNode>
  badges: Map<string, HTMLElement>
  /** Nodes whose row was drawn before the folder's answer came. */
  early: Set<string>
  /** What each entry showed when last looked at. */
  shown: Map<string, string>
  ipfsGateway?: string
  timer: boolean
  asking: boolean
}

/** What of an entry a row shows: its badge and which actions apply. */
const looks = (entry: FolderEntry | undefined, folder: ListedFolder) =>
  entry
    ? JSON.stringify([entry.state, entry.retrievableCopies, entry.cid ?? '', entry.attention?.reason ?? '', folder.ipfsGateway ?? ''])
    : ''

const FINAL = new Set(['Offloaded'])

export function createLiveBadges(deps: LiveBadgesDeps): LiveBadges {
  const intervalMs = deps.intervalMs ?? REFRESH_INTERVAL_MS
  const visible = deps.visible ?? (() => typeof document === 'undefined' || document.visibilityState !== 'hidden')
  const setTimer = deps.setTimer ?? ((run: () => void, ms: number) => setTimeout(run, ms))
  const folders = new Map<string, Watched>()

  const watched = (dir: string): Watched => {
    let w = folders.get(dir)
    if (!w) {
      w = { nodes: new Map(), badges: new Map(), early: new Set(), shown: new Map(), timer: false, asking: false }
      folders.set(dir, w)
    }
    return w
  }

  /** Compares the folder's answer with what its rows show, and redraws what changed. */
  const apply = (w: Watched, folder: ListedFolder | undefined) => {
    if (!folder) return
    for (const [name, node] of w.nodes) {
      const entry = folder.entries.get(name)
      const now = looks(entry, folder)
      const before = w.shown.get(name)
      w.shown.set(name, now)
      const changed = before !== undefined && before !== now
      if (!changed && !w.early.has(name)) continue
      w.early.delete(name)
      const badge = w.badges.get(name)
      const fresh = entry ? renderBadge(entry) : null
      if (badge?.isConnected && fresh) {
        badge.replaceWith(fresh)
        w.badges.set(name, fresh)
      }
      deps.nodeUpdated(node)
    }
  }

  const onScreen = (w: Watched) => [...w.badges.values()].some((b) => b.isConnected)
  const settled = (dir: string) => {
    const folder = deps.states.known(dir)
    return folder !== undefined && [...folder.entries.values()].every((e) => FINAL.has(e.state) && !e.attention)
  }

  const ask = (dir: string, w: Watched) => {
    if (w.asking) return
    w.asking = true
    // The rows shown, by name: FolderStates gathers them into one request per folder (with its ETag).
    void Promise.all([...w.nodes.keys()].map((name) => deps.states.load(dir, name)))
      .then((answers) => apply(w, answers.at(-1)))
      .finally(() => {
        w.asking = false
      })
  }

  const schedule = (dir: string, w: Watched) => {
    if (w.timer) return
    w.timer = true
    setTimer(() => {
      w.timer = false
      // The list moved on: forget the folder; a new listing starts again.
      if (!onScreen(w)) {
        if (folders.get(dir) === w) folders.delete(dir)
        return
      }
      if (visible() && !settled(dir)) ask(dir, w)
      schedule(dir, w)
    }, intervalMs)
  }

  return {
    seen(node, answered) {
      const w = watched(node.dirname)
      w.nodes.set(node.basename, node)
      if (!answered) {
        w.early.add(node.basename)
        ask(node.dirname, w)
      } else {
        const folder = deps.states.known(node.dirname)
        if (folder && !w.shown.has(node.basename)) w.shown.set(node.basename, looks(folder.entries.get(node.basename), folder))
      }
    },
    drawn(node, badge) {
      const w = watched(node.dirname)
      w.nodes.set(node.basename, node)
      w.badges.set(node.basename, badge)
      const folder = deps.states.known(node.dirname)
      if (folder && !w.shown.has(node.basename)) w.shown.set(node.basename, looks(folder.entries.get(node.basename), folder))
      schedule(node.dirname, w)
    },
  }
}
