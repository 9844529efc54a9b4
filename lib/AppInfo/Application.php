<?php

declare(strict_types=1);

/**
 * SPDX-License-Identifier: AGPL-3.0-or-later
 */

namespace OCA\Gateway\AppInfo;

use OCA\Files\Event\LoadAdditionalScriptsEvent;
use OCA\Files\Event\LoadSidebar;
use OCA\Gateway\Listener\LoadFilesScriptsListener;
use OCP\AppFramework\App;
use OCP\AppFramework\Bootstrap\IBootContext;
use OCP\AppFramework\Bootstrap\IBootstrap;
use OCP\AppFramework\Bootstrap\IRegistrationContext;

/**
 * Boots the app. Its only job on Nextcloud's side is to put the sidebar
 * script on pages that show the Files sidebar; every data request goes to
 * the bridge through the reverse proxy (see README.md).
 */
class Application extends App implements IBootstrap {
	public const APP_ID = 'gateway';

	public function __construct(array $urlParams = []) {
		parent::__construct(self::APP_ID, $urlParams);
	}

	public function register(IRegistrationContext $context): void {
		// appinfo/app.php is gone since Nextcloud 20; listeners are the way in.
		$context->registerEventListener(LoadAdditionalScriptsEvent::class, LoadFilesScriptsListener::class);
		$context->registerEventListener(LoadSidebar::class, LoadFilesScriptsListener::class);
	}

	public function boot(IBootContext $context): void {
	}
}
