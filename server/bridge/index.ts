import express, { type Express } from 'express'
import { join } from 'node:path'
import { pinoHttp } from 'pino-http'
import type { BridgeConfig } from '../shared/config.ts'
import { openDatabase, type Db } from '../shared/db.ts'
import { networkClock } from '../shared/epochs.ts'
import type { Logger } from '../shared/logger.ts'
import { ensureAdminUser } from './admin-bootstrap.ts'
import { basicAuth } from './auth/basic-auth.ts'
import { createCredentialCache } from './auth/credential-cache.ts'
import { createLoginThrottle, type ThrottleOptions } from './auth/throttle.ts'
import { BridgeError, bridgeErrorHandler } from './errors.ts'
import { createGatewayClient } from './gateway-client.ts'
import { createPathMap } from './path-map.ts'
import { createChunkedUploadRouter } from './routes/chunked-upload.ts'
import { createDavProxy } from './routes/dav-proxy.ts'
import { createFileMetadataRouter } from './routes/file-metadata.ts'
import { createNextcloudStatusRouter } from './routes/nextcloud-status.ts'
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

  const gateway = createGatewayClient({
    url: config.gatewayUrl,
    user: config.gatewayUser,
    password: config.gatewayPassword,
    timeoutMs: config.gatewayTimeoutMs,
  })
  const pathMap = createPathMap(config.pathMap)
  const clock = networkClock(config.network, config.simnetGenesis)
  const authOptions = { users, throttle: createLoginThrottle(deps.throttle), cache: createCredentialCache<User>() }
  const auth = basicAuth(authOptions)
  const optionalAuth = basicAuth({ ...authOptions, optional: true })

  const app = express()
  app.disable('x-powered-by')
  app.use(pinoHttp({
    logger,
    // Method, URL and outcome only: headers carry credentials.
    serializers: {
      req: (r: { id: unknown; method: string; url: string; remoteAddress?: string }) => ({ id: r.id, method: r.method, url: r.url, remoteAddress: r.remoteAddress }),
      res: (r: { statusCode: number }) => ({ statusCode: r.statusCode }),
    },
    customProps: (_req, res) => ({ user: (res as express.Response).locals?.user?.id }),
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
  }))
  app.use(createNextcloudStatusRouter({ auth, optionalAuth }))
  app.use(createFileMetadataRouter({ auth, gateway, pathMap, clock }))
  const uploads = createUploadStore(join(config.dataDir, 'uploads'))
  app.use(createChunkedUploadRouter({ auth, gateway, pathMap, uploads, logger }))
  app.use(createDavProxy({ auth, gateway, pathMap, logger }))
  app.use(() => {
    throw new BridgeError(404, 'NOT_FOUND', 'No such endpoint')
  })
  app.use(bridgeErrorHandler(logger))

  return {
    app,
    users,
    async close() {
      gateway.close()
      if (!deps.db) db.close()
    },
  }
}
