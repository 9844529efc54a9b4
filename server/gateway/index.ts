import express, { type Express, type RequestHandler } from 'express'
import { timingSafeEqual } from 'node:crypto'
import { join } from 'node:path'
import { lockDataFolder, type DataFolderLock } from './data-lock.ts'
import { openDatabase, type Db } from '../shared/db.ts'
import { EPOCHS_PER_DAY } from '../shared/epochs.ts'
import type { GatewayConfig } from '../shared/config.ts'
import type { Logger } from '../shared/logger.ts'
import { requestLogger } from '../shared/request-log.ts'
import { createNamespace, type Namespace } from './namespace.ts'
import { createContentStore, testPauseHook, type ContentStore } from './content/index.ts'
import { createDealEngine, createDealServiceClient, createDealStore, createTransferRouter, type DealEngine, type DealServiceClient, type DealStore, type StorageProviderPort } from './deals/index.ts'
import { createFileInfoRouter } from './file-info.ts'
import { groupReason } from './group-reason.ts'
import { createWebDav } from './webdav/index.ts'
import { gatewayErrorHandler } from './errors.ts'

export interface Gateway {
  /** The HTTP surface: `POST /file-info`, deal CAR transfers and WebDAV on every other path. */
  app: Express
  namespace: Namespace
  content: ContentStore
  dealStore: DealStore
  /** Present when the gateway can make deals (a deal service, its key, providers and a client address). */
  deals?: DealEngine
  /** Starts the deal engine's timer once the gateway listens (its URL goes into CAR transfer URLs). */
  startDeals(listenUrl: string): void
  /** Sets where providers fetch CARs (GATEWAY_PUBLIC_URL wins) without starting the timer (tests tick by hand). */
  setPublicUrl(listenUrl: string): void
  /** Stops timers and background work, then closes the database. */
  close(): Promise<void>
}

export interface GatewayDeps {
  logger: Logger
  /** Defaults to `<dataDir>/gateway.sqlite`. */
  db?: Db
  /** How deals reach storage providers (the simulated network's, in the embedded default). */
  providers?: StorageProviderPort
  /** Tests inject a client; default: HTTP to `config.serviceUrl` with `config.serviceApiKey`. */
  service?: DealServiceClient
  now?: () => number
  /** The data folder's lock, when the caller took it (waiting for a previous gateway); else taken here. */
  dataLock?: DataFolderLock
  /** Overrides of the deal engine's waits (tests make them short). */
  dealTimeouts?: { callMs?: number; reloadMs?: number; retryAfterMs?: number }
}

const DEFAULT_DEALS = { durationDays: 540, price: '0', verified: true, startOffsetEpochs: 5760, tickSeconds: 5, retrievalCheckSeconds: 600, renewBeforeDays: 30, repairHoldDays: 3 }

/** Builds a gateway over `config.dataDir`: SQLite metadata plus block and CAR files. */
export function createGateway(config: GatewayConfig, deps: GatewayDeps): Gateway {
  const logger = deps.logger.child({ part: 'gateway' })
  // Before anything touches the folder: a second gateway on it stops here.
  const lock = deps.dataLock ?? lockDataFolder(config.dataDir)
  const db = deps.db ?? openDatabase(join(config.dataDir, 'gateway.sqlite'))
  const namespace = createNamespace(db)
  const dealStore = createDealStore(db, deps.now)
  const content = createContentStore({
    db,
    dir: config.dataDir,
    groupSize: config.groupSize,
    groupIdleMs: config.groupIdleSeconds * 1000,
    logger,
    dealView: (groupId) => dealStore.view(groupId),
    pause: testPauseHook(config.testPauseAt, logger),
    sealThreads: config.sealThreads,
  })

  const terms = { ...DEFAULT_DEALS, ...config.deals }
  const service = deps.service ?? (config.serviceUrl && config.serviceApiKey ? createDealServiceClient({ url: config.serviceUrl, apiKey: config.serviceApiKey }) : undefined)
  let publicUrl = config.publicUrl ?? ''
  let deals: DealEngine | undefined
  if (service && deps.providers && config.clientAddress) {
    deals = createDealEngine({
      deals: dealStore,
      content,
      service,
      providers: deps.providers,
      clientAddress: config.clientAddress,
      publicUrl: () => publicUrl,
      terms: { durationEpochs: terms.durationDays * EPOCHS_PER_DAY, pricePerEpoch: terms.price, verified: terms.verified, startOffsetEpochs: terms.startOffsetEpochs },
      copies: terms.copies,
      retrievalCheckMs: terms.retrievalCheckSeconds * 1000,
      callTimeoutMs: deps.dealTimeouts?.callMs ?? 30_000,
      reloadTimeoutMs: deps.dealTimeouts?.reloadMs ?? 10 * 60_000,
      retryAfterMs: deps.dealTimeouts?.retryAfterMs ?? 60 * 60_000,
      // Deals ending within this window are renewed by new ones.
      renewBeforeEpochs: Math.round((terms.renewBeforeDays ?? DEFAULT_DEALS.renewBeforeDays) * EPOCHS_PER_DAY),
      repairHoldEpochs: Math.round((terms.repairHoldDays ?? DEFAULT_DEALS.repairHoldDays) * EPOCHS_PER_DAY),
      logger: logger.child({ module: 'deals' }),
      now: deps.now,
    })
    content.setRemoteSource(deals.remoteSource())
  } else {
    logger.info('deal engine off: needs SERVICE_URL, SERVICE_API_KEY, DEAL_CLIENT_ADDRESS and a provider network')
  }

  const app = express()
  app.disable('x-powered-by')
  app.set('etag', false)
  app.use(requestLogger(logger))
  // Before basic auth: storage providers fetch CARs with a per-deal token, not the service account.
  app.use(createTransferRouter({ deals: dealStore, content }))
  if (config.user && config.password) app.use(requireBasicAuth(config.user, config.password))
  const reasonContext = { groupSize: config.groupSize, groupIdleSeconds: config.groupIdleSeconds, progress: deals && ((id: number) => deals!.progress(id)) }
  app.use(createFileInfoRouter({ namespace, content, logger, reasonOf: (g) => groupReason(g, reasonContext), network: config.network, dealsBlocked: () => deals?.fundsProblem() }))
  app.use(createWebDav({ namespace, content, db, logger }))
  app.use(gatewayErrorHandler(logger))

  return {
    app,
    namespace,
    content,
    dealStore,
    deals,
    setPublicUrl(listenUrl) {
      publicUrl = config.publicUrl ?? listenUrl
    },
    startDeals(listenUrl) {
      publicUrl = config.publicUrl ?? listenUrl
      deals?.start(terms.tickSeconds * 1000)
    },
    async close() {
      await deals?.stop()
      await content.close()
      if (!deps.db) db.close()
      lock.release()
    },
  }
}

/** One service account in front of the whole gateway, as the real gateways have. */
function requireBasicAuth(user: string, password: string): RequestHandler {
  const expected = Buffer.from(`${user}:${password}`)
  return (req, res, next) => {
    const header = req.headers.authorization ?? ''
    const given = header.startsWith('Basic ') ? Buffer.from(header.slice(6), 'base64') : Buffer.alloc(0)
    if (given.length === expected.length && timingSafeEqual(given, expected)) return next()
    res.status(401).set('WWW-Authenticate', 'Basic realm="gateway"').json({ success: false, error: 'Authentication required' })
  }
}
