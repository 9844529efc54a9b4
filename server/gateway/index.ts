import express, { type Express, type RequestHandler } from 'express'
import { timingSafeEqual } from 'node:crypto'
import { lockDataFolder, type DataFolderLock } from './data-lock.ts'
import { fencedSql, lockDatabase, lockLost, noDatabaseLock, type DatabaseLock } from './database-lock.ts'
import type { Sql } from '../shared/sql/index.ts'
import { DEAL_DEFAULTS, DEFAULT_LISTING_WAIT_SECONDS, type GatewayConfig } from '../shared/config.ts'
import type { Faults } from '../shared/faults.ts'
import type { Logger } from '../shared/logger.ts'
import { requestLogger } from '../shared/request-log.ts'
import { PDP_MAX_UPLOAD_BYTES } from '../shared/piece.ts'
import { createNamespace, type Namespace } from './namespace.ts'
import { createFolderIndex, type FolderIndex } from './folder-index.ts'
import { createSpaceReserve, type SpaceReserve } from '../shared/disk.ts'
import { join } from 'node:path'
import { createRoomForDeletes } from './room-for-deletes.ts'
import { createContentStore, type ContentStore, type GroupRecord } from './content/index.ts'
import { createDealStore, createTransferRouter, type DealEngine, type DealStore } from './deals/index.ts'
import { datedViews } from './deals/deal-view.ts'
import { createDealWork, type DealWorkDeps } from './deal-work.ts'
import { createLiveness, currentListings, storeListingsAgain } from './retire/liveness.ts'
import { createCompactionRows } from './retire/compaction-rows.ts'
import { createFileInfoRouter } from './file-info.ts'
import { createFolderStatesRouter } from './folder-states.ts'
import { createStatusRouter } from './status.ts'
import { countingWrites, createRecordCache, type RecordCache } from './record-cache.ts'
import { groupReason } from './group-reason.ts'
import { createWebDav } from './webdav/index.ts'
import { gatewayErrorHandler } from './errors.ts'
import { openGatewaySql } from './store.ts'

export interface Gateway {
  /** The HTTP surface: `POST /file-info`, `POST /folder-states`, `POST /status`, deal CAR transfers and WebDAV on every other path. */
  app: Express
  namespace: Namespace
  content: ContentStore
  dealStore: DealStore
  /** Folders' summaries; their directory nodes are stored in the background after changes. */
  folders: FolderIndex
  /** Present when the gateway can make deals (a deal service, its key, providers and a client address). */
  deals?: DealEngine
  /** Starts the deal engine's timer once the gateway listens (its URL goes into CAR transfer URLs). */
  startDeals(listenUrl: string): void
  /** Sets where providers fetch CARs (GATEWAY_PUBLIC_URL wins) without starting the timer (tests tick by hand). */
  setPublicUrl(listenUrl: string): void
  /** Whether writes are accepted: false while a gateway on PostgreSQL has lost its database lock. */
  writable(): boolean
  /** Stops timers and background work, then closes the database. */
  close(): Promise<void>
}

export interface GatewayDeps extends DealWorkDeps {
  logger: Logger
  /** The caller's store (not closed by the gateway). Defaults to PostgreSQL's `gateway` schema at `config.databaseUrl`, else `<dataDir>/gateway.sqlite`. */
  sql?: Sql
  /** The data folder's lock, when the caller took it (waiting for a previous gateway); else taken here. */
  dataLock?: DataFolderLock
  /** Free bytes under the data folder (tests make the disk look fuller than it is). */
  freeBytes?: (dir: string) => Promise<number>
  /** Where a test steps in (crash tests stop the gateway there); nothing happens without it. */
  faults?: Faults
  /** How long folders' directory nodes wait after a change before they are stored (default 1 s; tests store them by hand). */
  folderSettleMs?: number
}

/** How old what a record says beyond the database (a deal's progress, free disk) may be: less than a tab's poll. */
const RECORD_FRESH_MS = 1_000

/** LISTING_WAIT_SECONDS, a day when the config leaves it unset (tests). */
const listingWaitOf = (config: GatewayConfig) => config.listingWaitSeconds ?? DEFAULT_LISTING_WAIT_SECONDS

/** Writes the database lock guards, refused early (before a body streams in) while it is lost. */
const WRITES = new Set(['PUT', 'DELETE', 'MKCOL', 'COPY', 'MOVE', 'PROPPATCH', 'LOCK', 'UNLOCK'])

/**
 * Builds a gateway over `config.dataDir` (block and CAR files) and its
 * records: PostgreSQL's `gateway` schema with `config.databaseUrl`, held
 * by this process alone (DatabaseInUse otherwise), else the SQLite file in
 * the folder. Throws DataFolderInUse when another gateway has the folder.
 */
export async function createGateway(config: GatewayConfig, deps: GatewayDeps): Promise<Gateway> {
  const logger = deps.logger.child({ part: 'gateway' })
  // The Onchain Cloud's own clock, read from its chain before anything is opened: its copies are dated and timed by it.
  const focClock = deps.foc && config.pdp?.copies ? await deps.foc.chainClock() : undefined
  // Before anything touches the folder: a second gateway on it stops here.
  const lock = deps.dataLock ?? lockDataFolder(config.dataDir)
  let store: Sql | undefined
  let dbLock: DatabaseLock = noDatabaseLock
  let parts: {
    namespace: Namespace
    dealStore: DealStore
    content: ContentStore
    folders: FolderIndex
    space: SpaceReserve
    webdav: RequestHandler
  }
  let sql: Sql
  let records: RecordCache
  try {
    store = deps.sql ?? (await openGatewaySql(config))
    // Before the schema is touched: a second gateway on the database stops here.
    if (config.databaseUrl && store.dialect === 'postgres') dbLock = await lockDatabase({ url: config.databaseUrl, logger })
    const counted = countingWrites(dbLock === noDatabaseLock ? store : fencedSql(store, dbLock))
    sql = counted.sql
    records = createRecordCache({ writes: counted.writes, freshMs: RECORD_FRESH_MS, maxEntries: 1_000 })
    const tree = await createNamespace(sql, { cidProfile: config.cidProfile })
    const dealStore = await createDealStore(sql, deps.now)
    const content = await createContentStore({
      sql,
      dir: config.dataDir,
      groupSize: config.groupSize,
      // While PDP copies are made, no CAR is larger than one upload of them.
      maxCarBytes: config.pdp?.copies ? (config.pdp.maxUploadBytes ?? PDP_MAX_UPLOAD_BYTES) : undefined,
      groupIdleMs: config.groupIdleSeconds * 1000,
      listingWaitMs: listingWaitOf(config) * 1000,
      logger,
      // PDP copies dated on their own chain's clock; deal-market deals are left to the reader, as CIDgravity's are.
      dealViews: async (groupIds) => datedViews(await dealStore.views(groupIds), { pdp: focClock }),
      faults: deps.faults,
      sealThreads: config.sealThreads,
      cidProfile: config.cidProfile,
      now: deps.now,
    })
    const folders = createFolderIndex({
      namespace: tree,
      content,
      logger: logger.child({ module: 'folder-index' }),
      settleMs: deps.folderSettleMs,
    })
    // Every change to the tree goes through this one, so the folders' summaries follow it.
    const namespace = folders.tracking(tree)
    const room = createRoomForDeletes(join(config.dataDir, 'room-for-deletes'))
    await room.hold()
    const space = createSpaceReserve({
      dir: config.dataDir,
      unsealedBytes: () => content.unsealedBytes(),
      marginBytes: config.diskReserveBytes,
      freeBytes: deps.freeBytes,
    })
    parts = {
      namespace,
      dealStore,
      content,
      folders,
      space,
      webdav: await createWebDav({
        namespace,
        content,
        sql,
        logger,
        // An upload let in leaves room beyond what is kept for sealing: the room for deletes is taken again then, if it was given up.
        uploadRefusal: async (bytes) => (await space.refusal(bytes)) ?? void (await room.hold()),
        releaseRoomForDeletes: room.release,
      }),
    }
  } catch (err) {
    await dbLock.release()
    if (!deps.sql) await store?.close().catch(() => {})
    if (!deps.dataLock) lock.release()
    throw err
  }
  const { namespace, dealStore, content, folders } = parts
  // Folders' summaries and directory nodes from now on in the background (all of them first: an existing data dir).
  folders.start()

  let publicUrl = config.publicUrl ?? ''
  const deals = createDealWork(config, deps, {
    dealStore,
    content,
    logger,
    paused: () => !dbLock.held(),
    publicUrl: () => publicUrl,
    focClock,
    // A group is live while a file of the tree or a folder's current listing has blocks in it.
    liveness: createLiveness({ sql, listings: () => currentListings(folders) }),
    compaction: {
      rows: createCompactionRows(sql),
      listings: () => currentListings(folders),
      storeListingsAgain: (cids) => storeListingsAgain(folders, cids),
    },
  })
  if (deals) content.setRemoteSource(deals.remoteSource())

  const app = httpSurface(config, { ...parts, logger, records, deals, writable: () => dbLock.held() })

  return {
    app,
    namespace,
    content,
    dealStore,
    folders,
    deals,
    setPublicUrl(listenUrl) {
      publicUrl = config.publicUrl ?? listenUrl
    },
    startDeals(listenUrl) {
      publicUrl = config.publicUrl ?? listenUrl
      deals?.start((config.deals?.tickSeconds ?? DEAL_DEFAULTS.tickSeconds) * 1000)
    },
    writable: () => dbLock.held(),
    async close() {
      await deals?.stop()
      await folders.close()
      await content.close()
      if (!deps.sql) await store!.close()
      await dbLock.release()
      lock.release()
    },
  }
}

/**
 * The gateway's HTTP surface: the CAR transfers (per-deal tokens), then
 * behind the service account `POST /file-info`, `POST /folder-states`,
 * `POST /status` and WebDAV on every other path.
 */
function httpSurface(
  config: GatewayConfig,
  p: {
    namespace: Namespace
    dealStore: DealStore
    content: ContentStore
    folders: FolderIndex
    space: SpaceReserve
    webdav: RequestHandler
    logger: Logger
    records: RecordCache
    deals?: DealEngine
    writable: () => boolean
  },
): Express {
  const { namespace, content, folders, records, deals, logger } = p
  const app = express()
  app.disable('x-powered-by')
  app.set('etag', false)
  app.use(requestLogger(logger))
  // Before basic auth: storage providers fetch CARs with a per-deal token, not the service account.
  app.use(createTransferRouter({ deals: p.dealStore, content }))
  if (config.user && config.password) app.use(requireBasicAuth(config.user, config.password))
  app.use((req, _res, next) => next(WRITES.has(req.method) && !p.writable() ? lockLost() : undefined))
  const reasonOf = async (g: GroupRecord) => {
    // A group ready for deals, or reloaded for repair, says how its deals stand; an offloaded one only that a copy
    // missed its proof (its record's copies say so: no other group costs a read).
    const asked =
      g.state === 'ready_for_deals' ||
      g.state === 'reload' ||
      (g.state === 'offloaded' && g.deals.some((d) => d.missedProofEpoch !== undefined))
    const progress = deals && asked ? await deals.progress(g.id) : undefined
    // A group to be sealed may be waiting for room for its CAR file.
    const freeBytes = g.state === 'full' || g.state === 'writable' ? await p.space.free().catch(() => undefined) : undefined
    return groupReason(g, {
      groupSize: content.groupSize(),
      groupIdleSeconds: config.groupIdleSeconds,
      listingWaitSeconds: listingWaitOf(config),
      progress: progress && (() => progress),
      freeBytes,
    })
  }
  app.use(createFileInfoRouter({ namespace, content, folders, logger, records, reasonOf }))
  app.use(createFolderStatesRouter({ namespace, content, folders, records, reasonOf }))
  app.use(createStatusRouter({ network: config.network, standing: () => deals?.standing() }))
  app.use(p.webdav)
  app.use(gatewayErrorHandler(logger))
  return app
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

// What the composition (server/compose) needs to start a gateway and reach the network.
export { acquireDataFolder, DataFolderInUse } from './data-lock.ts'
export { DatabaseInUse } from './database-lock.ts'
export { connectToNetwork, type NetworkAccess } from './deals/market/network-access.ts'
export { whyNotPublic, whyProvidersCannotFetch } from './deals/market/public-url.ts'
