<?php

declare(strict_types=1);

/**
 * SPDX-License-Identifier: AGPL-3.0-or-later
 */

namespace OCA\Gateway\Listener;

use OCA\Files\Event\LoadAdditionalScriptsEvent;
use OCA\Files\Event\LoadSidebar;
use OCA\Gateway\AppInfo\Application;
use OCP\EventDispatcher\Event;
use OCP\EventDispatcher\IEventListener;
use OCP\Util;

/**
 * Adds js/gateway-init.mjs as an init script wherever the Files list or the
 * Files sidebar is rendered (Nextcloud 33 to 35 dispatch both events on the
 * Files page), so the file actions and the Filecoin tab are registered before
 * the Files app starts, as Nextcloud's own apps do. A page may dispatch both
 * events: the browser runs one module URL once.
 *
 * @template-implements IEventListener<LoadAdditionalScriptsEvent|LoadSidebar>
 */
class LoadFilesScriptsListener implements IEventListener {
	public function handle(Event $event): void {
		if (!($event instanceof LoadAdditionalScriptsEvent) && !($event instanceof LoadSidebar)) {
			return;
		}
		Util::addInitScript(Application::APP_ID, 'gateway-init');
	}
}
