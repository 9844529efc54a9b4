/**
 * Entry `init` → js/gateway-init.mjs, added as an init script on Files pages
 * (lib/Listener/LoadFilesScriptsListener.php), so it runs before the Files
 * app starts. It only registers, through @nextcloud/files 4 (Nextcloud
 * 33–35): the Filecoin sidebar tab and the file actions (state badge, "Copy
 * CID", "Why is this not stored yet?", "Open on IPFS"). The view, Vue and the
 * logger are lazy chunks, and so is @nextcloud/files.
 *
 * Nothing here reads a global that Nextcloud 34 removed (jQuery, Backbone,
 * OC.Notifications, OC.Dialogs, OC.Files.Client): the preview page emulates
 * 34 and 35 without them (server/bridge/preview/assets/host.js).
 */
import { createListActions } from './file-actions/actions.ts'
import { createFolderStates } from './file-actions/folder-states.ts'
import { createLiveBadges } from './file-actions/live-badges.ts'
import { toFiles4 } from './file-actions/registries.ts'
import { openGatewayTab, registerGatewayTab } from './sidebar.ts'
import { askReasonFocus } from './utils/reason-focus.ts'

const files4 = () => import('@nextcloud/files')
const openOnFiles4 = (node: unknown, tabId: string) => files4().then(({ getSidebar }) => getSidebar().open(node as never, tabId))

/** Nextcloud's event bus (what @nextcloud/event-bus reaches): the Files app draws a node's row again on `files:node:updated`. */
type EventBus = { emit(name: string, ...args: unknown[]): void }
const eventBus = () => (window as { _nc_event_bus?: EventBus })._nc_event_bus

const states = createFolderStates()
const actions = createListActions({
  states,
  live: createLiveBadges({ states, nodeUpdated: (node) => eventBus()?.emit('files:node:updated', node) }),
  openTab: (node, { reason }) => {
    if (reason) askReasonFocus(node.path)
    return openGatewayTab(node, openOnFiles4)
  },
  copyText: (text) => navigator.clipboard.writeText(text),
  openUrl: (url) => void window.open(url, '_blank', 'noopener,noreferrer'),
})
// Now, before the Files app reads its registries.
void files4().then(({ registerFileAction }) => actions.forEach((a) => registerFileAction(toFiles4(a))))
registerGatewayTab((tab) => files4().then(({ registerSidebarTab }) => registerSidebarTab(tab)))
