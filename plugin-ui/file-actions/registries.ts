/**
 * Registers the list actions with whichever Files app the page runs:
 * Nextcloud 29–32 read `window._nc_fileactions` (@nextcloud/files 3, callbacks
 * take `(nodes, view)` / `(node, view, dir)`), Nextcloud 33 reads its own
 * registry through @nextcloud/files 4 (callbacks take one context object).
 * Neither reads the other's, and a callback of one shape in the other's
 * registry breaks every action of the list, so each gets its own objects.
 */
import type { IFileAction } from '@nextcloud/files'
import type { ListAction, ListNode } from './actions.ts'

type Files3Action = Record<string, unknown> & { id: string }

/** What @nextcloud/files 3's `registerFileAction` does: one array on window, an id at most once. */
export function registerFiles3(actions: readonly ListAction[], win: { _nc_fileactions?: Files3Action[] } = window as never): void {
  const registry = (win._nc_fileactions ??= [])
  for (const a of actions) {
    if (registry.some((r) => r.id === a.id)) continue
    registry.push({
      id: a.id,
      order: a.order,
      displayName: () => a.displayName(),
      iconSvgInline: () => a.iconSvgInline(),
      enabled: (nodes: ListNode[]) => a.enabled(nodes),
      exec: (node: ListNode) => a.exec(node),
      ...(a.renderInline ? { renderInline: (node: ListNode) => a.renderInline!(node) } : {}),
    })
  }
}

/** The same actions in @nextcloud/files 4's shape, for its `registerFileAction`. */
export function toFiles4(a: ListAction): IFileAction {
  const node = (nodes: readonly unknown[]) => nodes[0] as ListNode
  return {
    id: a.id,
    order: a.order,
    displayName: () => a.displayName(),
    iconSvgInline: () => a.iconSvgInline(),
    enabled: ({ nodes }) => a.enabled(nodes as unknown as ListNode[]),
    exec: ({ nodes }) => a.exec(node(nodes)),
    ...(a.renderInline ? { renderInline: ({ nodes }) => a.renderInline!(node(nodes)) } : {}),
  }
}
