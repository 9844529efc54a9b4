/**
 * Entry `main` → js/gateway-main.mjs, added to every Files page by the
 * LoadSidebar listener, opened tab or not: it only registers the tab. The
 * view, Vue and the logger are lazy chunks, and so is @nextcloud/files,
 * needed only to register on Nextcloud 33.
 */
import type { ISidebarTab } from '@nextcloud/files'

import { detectSidebarHost, registerGatewayTab } from './sidebar.ts'

const registerOnFiles4 = (tab: ISidebarTab) => import('@nextcloud/files').then(({ registerSidebarTab }) => registerSidebarTab(tab))

function start() {
  registerGatewayTab(detectSidebarHost(window as never, registerOnFiles4))
}

// Nextcloud 29–32 create OCA.Files.Sidebar while the Files app boots, so wait for the page.
if (document.readyState === 'loading') {
  window.addEventListener('DOMContentLoaded', start, { once: true })
} else {
  start()
}
