import express, { type Express } from 'express'
import type { RequestListener } from 'node:http'
import { join } from 'node:path'
import type { BridgeConfig } from '../shared/config.ts'
import { networkClock, type NetworkClock } from '../shared/epochs.ts'
import { openSql, type Sql } from '../shared/sql/index.ts'
import type { ServerOptions } from '../shared/http.ts'
import type { Logger } from '../shared/logger.ts'
import { requestLogger } from '../shared/request-log.ts'
import { VERSION } from '../shared/version.ts'
import { ensureAdminUser } from './admin-bootstrap.ts'
import { embeddedAuthBackend, nextcloudAuthBackend } from './auth/auth-backend.ts'
import { createLoginThrottle, type LoginThrottle, type ThrottleOptions } from './auth/throttle.ts'
import { clientErrorHandler } from './client-errors.ts'
import { BridgeError, bridgeErrorHandler } from './errors.ts'
import { parseExAppEnv } from './exapp/config.ts'
import { mountExApp } from './exapp/mount.ts'
import { createBridgeListener, type BridgeRoute } from './fast-lane.ts'
import { refuseIdentityHeaders } from './identity-headers.ts'
import { createLiveLink } from './live-link.ts'
import { bridgeOpenApi, OPENAPI_ROUTE } from './openapi.ts'
import { createAdminSettingsRouter } from './routes/admin-settings.ts'
import { createChunkedUploadRouter } from './routes/chunked-upload.ts'
import { createDavProxy } from './routes/dav-proxy.ts'
import { FILE_METADATA_ROUTE, createFileMetadataRoute } from './routes/file-metadata.ts'
import { FOLDER_STATES_ROUTE, createFolderStatesRoute, type FolderStatesDeps } from './routes/folder-states.ts'
import { createNextcloudStatusRouter } from './routes/nextcloud-status.ts'
import { createPreviewRouter } from './routes/preview.ts'
import { networkLabel } from './preview/page.ts'
import { createTabConfigRouter } from './routes/tab-config.ts'
import { createSessionStore } from './sessions.ts'
import { createNextcloudClient } from './nextcloud/nextcloud-client.ts'
import { nextcloudGatewayPath } from './nextcloud/nextcloud-paths.ts'
import { createSettingsStore, type SettingsStore } from './settings-store.ts'
import { createUploadStore } from './upload-store.ts'
import { createSpaceReserve } from '../shared/disk.ts'
import { createUserStore, type UserStore } from './users.ts'
import type { LiveLink } from './live-link.ts'

export interface Bridge {
  /** What the HTTP server serves: the metadata route's fast lane, then the Express app for everything else. */
  listener: RequestListener
  /** Embedded users; empty and unused with FILESYNC=nextcloud. */
  users: UserStore
  /**
   * For its HTTP server: what Node refuses before routing (431, 400) logged and answered in the app's
   * envelope, and the reverse proxy TRUST_PROXY names left out of the per-address connection cap
   * (its connections carry many clients').
   */
  serverOptions: Pick<ServerOptions, 'onClientError' | 'unlimitedAddress'>
  close(): Promise<void>
}

export interface BridgeDeps {
  logger: Logger
  /** The caller's store (left open on close); defaults to DATABASE_URL's `bridge` schema, else `<dataDir>/app.sqlite`. */
  sql?: Sql
  /** Where a generated admin password is shown once; stdout by default. */
  print?: (line: string) => void
  /** Failed-login throttle tuning (tests use a small window). */
  throttle?: ThrottleOptions
  /** The app's built front end served to the preview page; defaults to the repository's `js/`. */
  bundleDir?: string
  /** FILESYNC=nextcloud: how long a login Nextcloud accepted is reused (default 30 s; 0 asks every time). */
  nextcloudCacheMs?: number
  /** The embedded simulated network's clock (sped up or not); real time from SIMNET_GENESIS by default. */
  simnetClock?: NetworkClock
  /** FILESYNC=appapi: where APP_ID, APP_SECRET, APP_VERSION and APP_PORT are read (process.env by default). */
  env?: NodeJS.ProcessEnv
  /** On PostgreSQL: how often another replica's saved settings are looked for (default SETTINGS_REFRESH_MS). */
  settingsRefreshMs?: number
}

/**
 * The app surface: the OCS file-metadata route, a Nextcloud-compatible
 * WebDAV files area and status endpoints, all in front of a gateway reached
 * over HTTP only.
 */
export async function createBridge(config: BridgeConfig, deps: BridgeDeps): Promise<Bridge> {
  if (!config.gatewayUrl) throw new Error('The bridge needs a gateway URL (GATEWAY_URL)')
  const mode = config.filesync ?? 'embedded'
  if (mode !== 'embedded' && !config.nextcloudUrl) throw new Error(`FILESYNC=${mode} needs NEXTCLOUD_URL`)
  const logger = deps.logger.child({ part: 'bridge' })
  const sql = deps.sql ?? (await openSql({ databaseUrl: config.databaseUrl, file: join(config.dataDir, 'app.sqlite'), schema: 'bridge' }))
  const users = await createUserStore(sql)

  // Admin-saved gateway link settings override the environment's, live; requests read them from memory.
  const settings = await createSettingsStore(sql, config, { refreshMs: deps.settingsRefreshMs, logger })
  const simnetClock = deps.simnetClock ?? networkClock('simnet', config.simnetGenesis)
  const link = createLiveLink(settings, simnetClock)
  const throttle = await createLoginThrottle(sql, deps.throttle)

  const app = express()
  app.disable('x-powered-by')
  // API answers change with every poll; hashing each body for an ETag is work no client uses.
  app.set('etag', false)
  // Behind a reverse proxy: the client address (throttle, logs) and https (Secure cookies) from its X-Forwarded-* headers.
  app.set('trust proxy', config.trustProxy ?? false)
  app.use(requestLogger(logger, (_req, res) => ({ user: res.locals.caller?.user.id })))
  app.use(refuseIdentityHeaders(logger))
  // The OCS routes' description, readable without login in either mode.
  app.get(OPENAPI_ROUTE, (_req, res) => {
    res.json(bridgeOpenApi(VERSION))
  })

  const onClose: (() => void)[] = []
  let lane: LaneParts
  if (mode === 'embedded') {
    await ensureAdminUser(users, {
      dataDir: config.dataDir,
      adminPassword: config.adminPassword,
      print: deps.print ?? ((line) => process.stdout.write(line + '\n')),
    })
    lane = await mountEmbeddedRoutes(app, { config, deps, sql, users, settings, link, throttle, logger, onClose })
  } else if (mode === 'appapi') {
    // An AppAPI external app: AppAPI's lifecycle calls, then the app's routes behind its proxy (exapp/mount.ts).
    const exApp = parseExAppEnv({ ...(deps.env ?? process.env), NEXTCLOUD_URL: config.nextcloudUrl })
    const parts = mountExApp(app, { exApp, link, logger, timeoutMs: config.nextcloudTimeoutMs ?? 5_000 })
    lane = { ...parts, mountPointsIn: (_caller, userPath) => link.mounts.pointsIn(userPath) }
  } else {
    // Nextcloud owns users, sessions, files, status.php and capabilities: only the app's OCS routes are here.
    const client = createNextcloudClient({ url: config.nextcloudUrl!, timeoutMs: config.nextcloudTimeoutMs ?? 5_000 })
    const { auth, authenticate } = nextcloudAuthBackend({ client, throttle, logger, cacheTtlMs: deps.nextcloudCacheMs })
    lane = {
      authenticate,
      toGatewayPath: nextcloudGatewayPath({ mounts: link.mounts, client, logger }),
      mountPointsIn: (_caller, userPath) => link.mounts.pointsIn(userPath),
    }
    app.use(createTabConfigRouter({ auth, link }))
    app.use(createAdminSettingsRouter({ auth, settings }))
  }
  app.use(() => {
    throw new BridgeError(404, 'NOT_FOUND', 'No such endpoint')
  })
  app.use(bridgeErrorHandler(logger))

  const { gateway, pathMap, clock } = link
  const routes = new Map<string, BridgeRoute>([
    [
      FILE_METADATA_ROUTE,
      createFileMetadataRoute({ authenticate: lane.authenticate, gateway, pathMap, clock, toGatewayPath: lane.toGatewayPath }),
    ],
    [FOLDER_STATES_ROUTE, createFolderStatesRoute({ ...lane, gateway, ipfsGateway: () => ipfsGatewayOf(link) })],
  ])
  return {
    listener: createBridgeListener(app, routes, logger),
    users,
    serverOptions: {
      onClientError: clientErrorHandler(logger),
      unlimitedAddress: (address) => (app.get('trust proxy fn') as (address: string, hop: number) => boolean)(address, 0),
    },
    async close() {
      for (const stop of onClose) stop()
      settings.close()
      link.close()
      if (!deps.sql) await sql.close()
    },
  }
}

interface EmbeddedParts {
  config: BridgeConfig
  deps: BridgeDeps
  sql: Sql
  users: UserStore
  settings: SettingsStore
  link: LiveLink
  throttle: LoginThrottle
  logger: Logger
  /** What to stop when the bridge closes (the uploads sweep). */
  onClose: (() => void)[]
}

/** What the polled routes (served outside Express, fast-lane.ts) need of a mode: who calls, and where their paths live. */
type LaneParts = Pick<FolderStatesDeps, 'authenticate' | 'toGatewayPath' | 'mountPointsIn'>

/** Only a network whose providers publish what they store can open it on IPFS; a local one cannot. The network is the gateway's word. */
function ipfsGatewayOf(link: LiveLink): string | undefined {
  const network = link.network()
  return network === 'mainnet' || network === 'calibration' ? link.effective().ipfsGateway || undefined : undefined
}

/**
 * The embedded default: users, the WebDAV files area, status endpoints and the
 * preview page, besides the OCS routes; the polled routes are served outside
 * Express (fast-lane.ts).
 */
async function mountEmbeddedRoutes(app: Express, p: EmbeddedParts): Promise<LaneParts> {
  const { gateway, pathMap, clock } = p.link
  const sessions = await createSessionStore(p.sql)
  const { authenticate, auth, davAuth, optionalAuth } = embeddedAuthBackend({ users: p.users, sessions, throttle: p.throttle })
  app.use(createNextcloudStatusRouter({ auth, optionalAuth }))
  app.use(createTabConfigRouter({ auth, link: p.link }))
  app.use(createAdminSettingsRouter({ auth, settings: p.settings }))
  const uploads = createUploadStore(join(p.config.dataDir, 'uploads'), { maxPerUser: p.config.maxUploadsPerUser })
  // Old uploads go on a timer, a bounded step at a time, never on a request's path.
  p.onClose.push(
    uploads.startSweeping({
      intervalMs: 60_000,
      onError: (err) => p.logger.warn({ err }, 'sweeping old uploads failed; tried again in a minute'),
    }),
  )
  // Chunks share the disk with the gateway's groups: they leave free what the gateway keeps for sealing.
  const space = createSpaceReserve({
    dir: p.config.dataDir,
    unsealedBytes: async () => 0,
    marginBytes: p.config.diskReserveBytes,
    disk: "The server's disk",
  })
  app.use(createChunkedUploadRouter({ auth: davAuth, gateway, pathMap, uploads, logger: p.logger, chunkRefusal: space.refusal }))
  app.use(createDavProxy({ auth: davAuth, gateway, pathMap, logger: p.logger }))
  app.use(
    createPreviewRouter({
      users: p.users,
      sessions,
      throttle: p.throttle,
      bundleDir: p.deps.bundleDir ?? p.config.bundleDir ?? join(import.meta.dirname, '..', '..', 'js'),
      network: () => networkLabel(clock),
    }),
  )
  return { authenticate, toGatewayPath: async (caller, userPath) => pathMap.toGateway(caller.user.id, userPath) }
}
