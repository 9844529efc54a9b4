<?php

declare(strict_types=1);

/**
 * SPDX-License-Identifier: AGPL-3.0-or-later
 */

namespace OCA\Gateway\Listener;

use OCA\Files\Event\LoadSidebar;
use OCA\Gateway\AppInfo\Application;
use OCP\EventDispatcher\Event;
use OCP\EventDispatcher\IEventListener;
use OCP\Util;

/**
 * Adds js/gateway-main.mjs wherever the Files sidebar is rendered, so the
 * Filecoin tab can register itself.
 *
 * @template-implements IEventListener<LoadSidebar>
 */
class LoadSidebarListener implements IEventListener {
	public function handle(Event $event): void {
		if (!($event instanceof LoadSidebar)) {
			return;
		}
		Util::addScript(Application::APP_ID, 'gateway-main');
	}
}
