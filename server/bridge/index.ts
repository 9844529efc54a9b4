import express, { type Express } from 'express'
import { join } from 'node:path'
import type { BridgeConfig } from '../shared/config.ts'
import { openDatabase, type Db } from '../shared/db.ts'
import type { Logger } from '../shared/logger.ts'
import { requestLogger } from '../shared/request-log.ts'
import { ensureAdminUser } from './admin-bootstrap.ts'
import { basicAuth } from './auth/basic-auth.ts'
import { createCredentialCache } from './auth/credential-cache.ts'
import { sessionOrBasicAuth } from './auth/session-auth.ts'
import { createLoginThrottle, type ThrottleOptions } from './auth/throttle.ts'
import { BridgeError, bridgeErrorHandler } from './errors.ts'
import { createLiveLink } from './live-link.ts'
import { createAdminSettingsRouter } from './routes/admin-settings.ts'
import { createChunkedUploadRouter } from './routes/chunked-upload.ts'
import { createDavProxy } from './routes/dav-proxy.ts'
import { createFileMetadataRouter } from './routes/file-metadata.ts'
import { createNextcloudStatusRouter } from './routes/nextcloud-status.ts'
import { createPreviewRouter } from './routes/preview.ts'
import { createTabConfigRouter } from './routes/tab-config.ts'
import { createSessionStore } from './sessions.ts'
import { createSettingsStore } from './settings-store.ts'
import { createUploadStore } from './upload-store.ts'
import { createUserStore, type User, type UserStore } from './users.ts'

export interface Bridge {
  app: Express
  users: UserStore
  close(): Promise<void>
}

export interface BridgeDeps {
  logger: Logger
  /** Defaults to `<dataDir>/app.sqlite`. */
  db?: Db
  /** Where a generated admin password is shown once; stdout by default. */
  print?: (line: string) => void
  /** Failed-login throttle tuning (tests use a small window). */
  throttle?: ThrottleOptions
  /** The app's built front end served to the preview page; defaults to the repository's `js/`. */
  bundleDir?: string
}

/**
 * The app surface: the OCS file-metadata route, a Nextcloud-compatible
 * WebDAV files area and status endpoints, all in front of a gateway reached
 * over HTTP only.
 */
export async function createBridge(config: BridgeConfig, deps: BridgeDeps): Promise<Bridge> {
  if (!config.gatewayUrl) throw new Error('The bridge needs a gateway URL (GATEWAY_URL)')
  const logger = deps.logger.child({ part: 'bridge' })
  const db = deps.db ?? openDatabase(join(config.dataDir, 'app.sqlite'))
  const users = createUserStore(db)
  await ensureAdminUser(users, {
    dataDir: config.dataDir,
    adminPassword: config.adminPassword,
    print: deps.print ?? ((line) => process.stdout.write(line + '\n')),
  })

  // Admin-saved gateway link settings override the environment's, live.
  const settings = createSettingsStore(db, config)
  const link = createLiveLink(settings, config.simnetGenesis)
  const { gateway, pathMap, clock } = link
  const authOptions = { users, throttle: createLoginThrottle(deps.throttle), cache: createCredentialCache<User>() }
  // Basic auth, or the preview page's session cookie with its requesttoken.
  const sessions = createSessionStore(db)
  const basic = basicAuth(authOptions)
  const auth = sessionOrBasicAuth({ sessions, users, basic })
  const davAuth = sessionOrBasicAuth({ sessions, users, basic, exemptSafeMethods: true })
  const optionalAuth = basicAuth({ ...authOptions, optional: true })

  const app = express()
  app.disable('x-powered-by')
  app.use(requestLogger(logger, (res) => res.locals.user?.id))

  app.use(createNextcloudStatusRouter({ auth, optionalAuth }))
  app.use(createFileMetadataRouter({ auth, gateway, pathMap, clock }))
  app.use(createTabConfigRouter({ auth, settings, simnetGenesis: config.simnetGenesis }))
  app.use(createAdminSettingsRouter({ auth, settings }))
  const uploads = createUploadStore(join(config.dataDir, 'uploads'))
  app.use(createChunkedUploadRouter({ auth: davAuth, gateway, pathMap, uploads, logger }))
  app.use(createDavProxy({ auth: davAuth, gateway, pathMap, logger }))
  app.use(createPreviewRouter({
    users,
    sessions,
    throttle: authOptions.throttle,
    bundleDir: deps.bundleDir ?? config.bundleDir ?? join(import.meta.dirname, '..', '..', 'js'),
  }))
  app.use(() => {
    throw new BridgeError(404, 'NOT_FOUND', 'No such endpoint')
  })
  app.use(bridgeErrorHandler(logger))

  return {
    app,
    users,
    async close() {
      link.close()
      if (!deps.db) db.close()
    },
  }
}
