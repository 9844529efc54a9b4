/**
 * Entry `main` → js/gateway-main.mjs, added to Files pages by the
 * LoadSidebar listener. Kept tiny: the view itself is a lazy chunk.
 */
import { registerSidebarTab } from '@nextcloud/files'
import { detectSidebarHost, registerGatewayTab } from './sidebar.ts'

function start() {
  registerGatewayTab(detectSidebarHost(window as never, registerSidebarTab))
}

// Nextcloud 29–32 create OCA.Files.Sidebar while the Files app boots, so wait for the page.
if (document.readyState === 'loading') {
  window.addEventListener('DOMContentLoaded', start, { once: true })
} else {
  start()
}
