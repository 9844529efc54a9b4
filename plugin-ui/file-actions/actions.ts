/**
 * The app's file actions in the Files list, written once for both Files APIs
 * (registries.ts adapts them): the state badge, "Copy CID", "Why is this not
 * stored yet?" and "Open on IPFS". Every row of a listing reads the one
 * answer its folder shares (folder-states.ts).
 */
import type { FolderEntry, FolderStates, ListedFolder } from './folder-states.ts'

import { copyPath, storagePath } from '../icons.ts'
import { translate } from '../utils/entry-l10n.ts'
import { renderBadge } from './badge.ts'
import type { LiveBadges } from './live-badges.ts'

/** What both Files APIs' nodes have in common, and all the actions read. */
export interface ListNode {
  /** The node's path in the user's files, e.g. `/Photos/cat.jpg`. */
  path: string
  dirname: string
  basename: string
  type: string
  /** `/files/<user>` for the user's own files; other roots (trash bin, versions) get no actions. */
  root?: string | null
}

/** One action, as the Files list runs it, for either API. */
export interface ListAction {
  id: string
  order: number
  displayName: () => string
  iconSvgInline: () => string
  enabled: (nodes: readonly ListNode[]) => boolean
  exec: (node: ListNode) => Promise<boolean | null>
  renderInline?: (node: ListNode) => Promise<HTMLElement | null>
}

export interface ActionDeps {
  states: FolderStates
  /** Opens the sidebar on the Filecoin tab for the node, with its reason in view when asked. */
  openTab: (node: ListNode, options: { reason: boolean }) => Promise<void>
  copyText: (text: string) => Promise<void>
  openUrl: (url: string) => void
  /** Keeps drawn rows in step with their folder's later answers (live-badges.ts). */
  live?: LiveBadges
}

const svg = (path: string) => `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><path d="${path}"/></svg>`
// A square with an arrow leaving it: opens elsewhere.
const openPath = 'M14 3h7v7h-2V6.4l-9.3 9.3-1.4-1.4L17.6 5H14V3zM5 5h6v2H5v12h12v-6h2v6a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2V7a2 2 0 0 1 2-2z'

const inUserFiles = (node: ListNode) => !node.root || node.root.startsWith('/files/')
const one = (nodes: readonly ListNode[]) => (nodes.length === 1 && inUserFiles(nodes[0]) ? nodes[0] : undefined)

export function ipfsLink(folder: ListedFolder, entry: FolderEntry): string | undefined {
  if (!folder.ipfsGateway || !entry.cid || entry.retrievableCopies < 1) return undefined
  return `${folder.ipfsGateway.replace(/\/+$/, '')}/ipfs/${encodeURIComponent(entry.cid)}`
}

export function createListActions(deps: ActionDeps): ListAction[] {
  const { states } = deps
  /**
   * The one node asked about, with its folder's answer and its entry once that came: `entry` is
   * undefined before the answer, null when the gateway does not have the node.
   */
  const asked = (nodes: readonly ListNode[]) => {
    const node = one(nodes)
    const folder = node && states.known(node.dirname)
    return { node, folder, entry: node && folder && (folder.entries.get(node.basename) ?? null) }
  }
  const entryOf = async (node: ListNode) => (await states.load(node.dirname, node.basename))?.entries.get(node.basename)

  return [
    {
      id: 'gateway-state',
      order: -5,
      // Shown as the badge only: no name of its own in any menu.
      displayName: () => '',
      iconSvgInline: () => '',
      // Asked of every row as it is drawn: the row is then followed, and drawn again when its folder's answer changes what it shows.
      enabled: (nodes) => {
        const { node, folder } = asked(nodes)
        if (node) deps.live?.seen(node, folder !== undefined)
        return node !== undefined
      },
      exec: async (node) => {
        await deps.openTab(node, { reason: false })
        return null
      },
      async renderInline(node) {
        const entry = await entryOf(node)
        const badge = entry ? renderBadge(entry) : null
        if (badge) deps.live?.drawn(node, badge)
        return badge
      },
    },
    {
      id: 'gateway-copy-cid',
      order: 60,
      displayName: () => translate('Copy CID'),
      iconSvgInline: () => svg(copyPath),
      // Offered before the folder's answer comes (the Files app asks once per row, when it renders it); it then copies once the CID is known.
      enabled: (nodes) => {
        const { node, entry } = asked(nodes)
        return node !== undefined && (entry === undefined || Boolean(entry?.cid))
      },
      exec: async (node) => {
        const cid = (await entryOf(node))?.cid
        if (!cid) return false
        await deps.copyText(cid)
        return true
      },
    },
    {
      id: 'gateway-why-not-stored',
      order: 61,
      displayName: () => translate('Why is this not stored yet?'),
      iconSvgInline: () => svg(storagePath),
      enabled: (nodes) => {
        const { node, entry } = asked(nodes)
        return node !== undefined && (entry === undefined || (entry !== null && entry.state !== 'Offloaded'))
      },
      exec: async (node) => {
        await deps.openTab(node, { reason: true })
        return null
      },
    },
    {
      id: 'gateway-open-ipfs',
      order: 62,
      displayName: () => translate('Open on IPFS'),
      iconSvgInline: () => svg(openPath),
      // Only once the answer says the network publishes the data: never a link that cannot resolve.
      enabled: (nodes) => {
        const { folder, entry } = asked(nodes)
        return Boolean(folder && entry && ipfsLink(folder, entry))
      },
      exec: async (node) => {
        const folder = await states.load(node.dirname, node.basename)
        const entry = folder?.entries.get(node.basename)
        const url = folder && entry && ipfsLink(folder, entry)
        if (!url) return false
        deps.openUrl(url)
        return null
      },
    },
  ]
}
