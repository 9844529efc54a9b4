/**
 * Entry `init` → js/gateway-init.mjs, added as an init script on Files pages
 * (lib/Listener/LoadFilesScriptsListener.php), so it runs before the Files
 * app starts. It only registers: the Filecoin sidebar tab and the file
 * actions (state badge, "Copy CID", "Why is this not stored yet?", "Open on
 * IPFS"). The view, Vue and the logger are lazy chunks, and so is
 * @nextcloud/files, needed only on Nextcloud 33.
 */
import type { ISidebarTab } from '@nextcloud/files'

import { createListActions } from './file-actions/actions.ts'
import { createFolderStates } from './file-actions/folder-states.ts'
import { createLiveBadges } from './file-actions/live-badges.ts'
import { registerFiles3, toFiles4 } from './file-actions/registries.ts'
import { detectSidebarHost, openGatewayTab, registerGatewayTab, runsFiles4 } from './sidebar.ts'
import { askReasonFocus } from './utils/reason-focus.ts'

const files4 = () => import('@nextcloud/files')
const registerOnFiles4 = (tab: ISidebarTab) => files4().then(({ registerSidebarTab }) => registerSidebarTab(tab))
const openOnFiles4 = (node: unknown, tabId: string) => files4().then(({ getSidebar }) => getSidebar().open(node as never, tabId))
const sidebarHost = () => detectSidebarHost(window as never, registerOnFiles4)

/** Nextcloud's event bus (what @nextcloud/event-bus reaches): the Files app draws a node's row again on `files:node:updated`. */
type EventBus = { emit(name: string, ...args: unknown[]): void }
const eventBus = () => (window as { _nc_event_bus?: EventBus })._nc_event_bus

const states = createFolderStates()
const actions = createListActions({
  states,
  live: createLiveBadges({ states, nodeUpdated: (node) => eventBus()?.emit('files:node:updated', node) }),
  openTab: (node, { reason }) => {
    if (reason) askReasonFocus(node.path)
    return openGatewayTab(sidebarHost(), node, openOnFiles4)
  },
  copyText: (text) => navigator.clipboard.writeText(text),
  openUrl: (url) => void window.open(url, '_blank', 'noopener,noreferrer'),
})
// Now, before the Files app reads its registry.
if (runsFiles4(window as never)) {
  void files4().then(({ registerFileAction }) => actions.forEach((a) => registerFileAction(toFiles4(a))))
} else {
  registerFiles3(actions)
}

// Nextcloud 29–32 create OCA.Files.Sidebar while the Files app boots, so the tab waits for the page.
const start = () => registerGatewayTab(sidebarHost())
if (document.readyState === 'loading') {
  window.addEventListener('DOMContentLoaded', start, { once: true })
} else {
  start()
}
