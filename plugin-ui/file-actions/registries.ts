/**
 * The list actions in the shape Nextcloud 33–35's Files app reads: its own
 * registry, filled through @nextcloud/files 4's `registerFileAction`, whose
 * callbacks take one context object (`{ nodes, view, folder, contents }`).
 * Nextcloud 29–32's `window._nc_fileactions` (positional callbacks) is no
 * longer served: those releases are out of the supported range.
 */
import type { IFileAction } from '@nextcloud/files'
import type { ListAction, ListNode } from './actions.ts'

/** One action in @nextcloud/files 4's shape, for its `registerFileAction`. */
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
