/** Entry `admin` → js/gateway-admin.mjs, loaded by lib/Settings/AdminSettings.php. */
import { createApp } from 'vue'
import AdminSettings from './views/AdminSettings.vue'

export const ADMIN_MOUNT_ID = 'gateway-admin-settings'

const el = document.getElementById(ADMIN_MOUNT_ID)
if (el) createApp(AdminSettings).mount(el)
