import express, { type Express } from 'express'
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import { chainDirectory, createProviderClient } from '../network/boost/client.ts'
import { withProviderAsks } from '../network/provider-asks.ts'
import type { NetworkPort } from '../network/types.ts'
import { addressNetworkOf, parseAddress } from '../shared/address.ts'
import type { ServiceConfig } from '../shared/config.ts'
import type { Logger } from '../shared/logger.ts'
import { requestLogger } from '../shared/request-log.ts'
import { loadOrCreateSecretFile, randomSecret } from '../shared/secrets.ts'
import { openSql, type Sql } from '../shared/sql/index.ts'
import { requireApiKey, requirePlan } from './auth.ts'
import { createAvailabilityChecker } from './availability.ts'
import { createProviderPicker } from './best-providers.ts'
import { ENDPOINTS } from './catalog.ts'
import { createDealStore, type DealStore } from './deal-store.ts'
import { createDealSync, type DealSync } from './deal-sync.ts'
import { notFound, requestId, serviceErrorHandler } from './errors.ts'
import { createPolicyStore } from './onboarding-policy.ts'
import { serviceOpenApi } from './openapi.ts'
import { createDealsRouter } from './routes/deals.ts'
import { createEpochsRouter } from './routes/epochs.ts'
import { createPolicyRouter } from './routes/policy.ts'
import { createProvidersRouter } from './routes/providers.ts'
import { createPublicRouter } from './routes/public.ts'
import { migrateService } from './schema.ts'
import { createTenantStore, type TenantStore } from './tenants.ts'
import { createTicker, type Ticker } from './ticker/index.ts'

export interface DealServiceDeps {
  logger: Logger
  /** The caller's store (not closed by the service). Defaults to PostgreSQL at `config.databaseUrl`, else `<dataDir>/service.sqlite`. */
  sql?: Sql
  /**
   * The chain and its providers, as the caller composed them (server/compose):
   * a Lotus node's, or the simulated network's. Closed with the service.
   */
  network: NetworkPort
  /** Unix ms; tests inject a clock. */
  now?: () => number
  /** Exchange base URLs by name (tests point them at loopback). */
  exchangeUrls?: Record<string, string>
  fetch?: typeof fetch
  /** False: no timers (tests drive syncs and polls themselves). Default true. */
  background?: boolean
}

export interface DealService {
  app: Express
  tenants: TenantStore
  deals: DealStore
  network: NetworkPort
  ticker: Ticker
  sync: DealSync
  /** The first tenant's key when it was created by this start (print it once), else undefined. */
  createdApiKey?: string
  close(): Promise<void>
}

const DEAL_SYNC_MS = 30_000

/** Builds the deal service: public ticker, authenticated `/private/v1/*`, `/openapi.json`. */
export async function createDealService(config: ServiceConfig, deps: DealServiceDeps): Promise<DealService> {
  const logger = deps.logger.child({ part: 'service' })
  const now = deps.now ?? Date.now
  const sql =
    deps.sql ?? (await openSql({ databaseUrl: config.databaseUrl, file: join(config.dataDir, 'service.sqlite'), schema: 'service' }))
  let createdApiKey: string | undefined
  try {
    await migrateService(sql)
    createdApiKey = await bootstrapTenant(config, sql)
  } catch (err) {
    if (!deps.sql) await sql.close()
    throw err
  }
  const chain = deps.network
  // On a real network, providers' terms come from their storage asks over libp2p.
  const asks =
    chain.kind === 'lotus'
      ? await createProviderClient({ directory: chainDirectory(chain), network: addressNetworkOf(config.network) })
      : undefined
  const network = asks ? withProviderAsks(chain, asks) : chain
  const tenants = createTenantStore(sql)
  const deals = createDealStore(sql)
  const policies = createPolicyStore(sql)
  const availability = createAvailabilityChecker({ network, deals })
  const picker = createProviderPicker({ network, deals, availability })
  const ticker = createTicker({ now, logger, baseUrls: deps.exchangeUrls, fetch: deps.fetch })
  const sync = createDealSync({ sql, network, tenants, deals, now, logger })

  const app = express()
  app.disable('x-powered-by')
  app.set('etag', false)
  // The request's UUID is also the `code` of any error envelope, so support can find the log line.
  app.use((_req, res, next) => {
    res.locals.requestId = randomUUID()
    next()
  })
  app.use(requestLogger(logger, (_req, res) => ({ reqId: requestId(res) })))
  const openapi = JSON.stringify(serviceOpenApi())
  app.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(openapi)
  })
  // The key before the body: a stranger with a wrong key must not hold a connection by sending a slow one.
  app.use('/private', requireApiKey(tenants))
  app.use(express.json({ limit: '1mb', type: 'application/json' }))
  app.use(createPublicRouter({ ticker }))
  for (const e of ENDPOINTS) if (e.plans) app.use(e.path, requirePlan(e.plans))
  app.use(createEpochsRouter({ clock: network.clock }))
  app.use(createDealsRouter({ deals }))
  const addressNetwork = addressNetworkOf(config.network)
  app.use(createProvidersRouter({ network, tenants, policies, availability, picker, addressNetwork }))
  app.use(createPolicyRouter({ policies, tenants, network, addressNetwork }))
  app.use((_req, _res, next) => next(notFound()))
  app.use(serviceErrorHandler(logger))

  if (deps.background !== false) {
    sync.start(DEAL_SYNC_MS)
    if (config.tickerEnabled) ticker.start(config.tickerPollSeconds * 1000)
  }

  return {
    app,
    tenants,
    deals,
    network,
    ticker,
    sync,
    createdApiKey,
    async close() {
      await Promise.all([sync.stop(), ticker.stop()])
      await network.close()
      await asks?.close()
      if (!deps.sql) await sql.close()
    },
  }
}

/**
 * First start: a Clients premium tenant whose key is API_KEY or, without it,
 * a random one saved (0600) in the data dir. In one transaction, and safe when
 * replicas start together: each step leaves what another already wrote.
 */
async function bootstrapTenant(config: ServiceConfig, sql: Sql): Promise<string | undefined> {
  // Without API_KEY the tenant's key is a generated one kept in the data dir (made on
  // the first start without API_KEY), which the embedded gateway reads. Only a
  // generated key is shown, once: the operator already knows theirs, and a log is no place for it.
  const keyFile = config.apiKey ? undefined : loadOrCreateSecretFile(join(config.dataDir, 'api-key'), () => `fgs_${randomSecret(24)}`)
  await sql.transaction(async (tx) => {
    const tenants = createTenantStore(tx)
    const tenant = await tenants.ensure('default', 'clients-premium')
    // The gateway's wallet address (npm start passes it): its deals are the tenant's.
    if (config.clientAddress && parseAddress(config.clientAddress).ok) await tenants.addClientAddress(tenant.id, config.clientAddress)
    // A key stored already is left as it is; API_KEY set later (or changed) still opens the default tenant.
    if (keyFile) await tenants.createKey(tenant.id, 'generated', keyFile.value)
    if (config.apiKey) await tenants.createKey(tenant.id, 'API_KEY', config.apiKey)
  })
  return keyFile?.created ? keyFile.value : undefined
}

// The deal service's error envelope for what its HTTP server answers itself (408, 503), used by server/compose.
export { serviceErrorBody } from './errors.ts'
