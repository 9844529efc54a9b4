/**
 * FILESYNC=appapi: the app surface as an AppAPI external app. AppAPI's
 * proxy (/index.php/apps/app_api/proxy/<appid>/<route>) forwards the
 * browser's requests here with its headers for the user; AppAPI calls the
 * lifecycle endpoints itself. Nextcloud owns users and files, as with
 * FILESYNC=nextcloud; a path is checked against the user's tree over WebDAV
 * with AppAPI's headers for that user.
 */
import express, { type Express } from 'express'
import type { Logger } from '../../shared/logger.ts'
import { authMiddleware, type Authenticate, type Caller } from '../auth/caller.ts'
import type { LiveLink } from '../live-link.ts'
import { createNextcloudClient } from '../nextcloud/nextcloud-client.ts'
import { nextcloudGatewayPath } from '../nextcloud/nextcloud-paths.ts'
import { createTabConfigRouter } from '../routes/tab-config.ts'
import { createAppApiClient } from './appapi-client.ts'
import { appApiAuthenticate } from './auth.ts'
import type { ExAppConfig } from './config.ts'
import { fileActionHandler } from './file-action.ts'
import { createExAppLifecycleRouter, FILE_ACTION_ROUTE } from './lifecycle.ts'

export interface ExAppParts {
  authenticate: Authenticate
  toGatewayPath: (caller: Caller, userPath: string) => Promise<string>
}

export function mountExApp(app: Express, p: { exApp: ExAppConfig; link: LiveLink; logger: Logger; timeoutMs: number }): ExAppParts {
  const identity = { appId: p.exApp.appId, secret: p.exApp.secret, version: p.exApp.version }
  let appApiVersion = '0'
  const appApi = createAppApiClient({ nextcloudUrl: p.exApp.nextcloudUrl, identity, appApiVersion: () => appApiVersion })
  app.use(
    createExAppLifecycleRouter({
      identity,
      appApi,
      sawAppApiVersion: (version) => {
        appApiVersion = version
      },
      logger: p.logger,
    }),
  )
  const authenticate = appApiAuthenticate(identity)
  const client = createNextcloudClient({ url: p.exApp.nextcloudUrl, timeoutMs: p.timeoutMs })
  const toGatewayPath = nextcloudGatewayPath({ mounts: p.link.mounts, client, logger: p.logger })
  app.post(
    FILE_ACTION_ROUTE,
    express.json({ limit: '256kb' }),
    fileActionHandler({ authenticate, gateway: p.link.gateway, clock: p.link.clock, toGatewayPath }),
  )
  app.use(createTabConfigRouter({ auth: authMiddleware(authenticate), link: p.link }))
  return { authenticate, toGatewayPath }
}
