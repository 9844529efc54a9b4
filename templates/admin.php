<?php
/**
 * SPDX-License-Identifier: AGPL-3.0-or-later
 *
 * Mount point of js/gateway-admin.mjs (plugin-ui/admin.ts).
 */
?>
<div id="gateway-admin-settings"></div>
