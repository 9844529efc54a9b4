/**
 * Builds the Nextcloud app's front end: entry `init` → js/gateway-init.mjs
 * (the sidebar tab, loaded on Files pages) and `admin` → js/gateway-admin.mjs.
 * The app id and version come from appinfo/info.xml.
 */
import { createAppConfig } from '@nextcloud/vite-config'
import { join } from 'node:path'

export default createAppConfig(
  {
    init: join(import.meta.dirname, 'plugin-ui', 'init.ts'),
    admin: join(import.meta.dirname, 'plugin-ui', 'admin.ts'),
  },
  {
    // Each chunk injects its own styles, so the lazy view's CSS loads with the view.
    inlineCSS: { relativeCSSInjection: true },
    // No third-party license extraction files beside the bundle: the archive ships README and appinfo only.
    extractLicenseInformation: false,
  },
)
