import express, { type Express, type RequestHandler } from 'express'
import { timingSafeEqual } from 'node:crypto'
import { join } from 'node:path'
import { openDatabase, type Db } from '../shared/db.ts'
import type { GatewayConfig } from '../shared/config.ts'
import type { Logger } from '../shared/logger.ts'
import { createNamespace, type Namespace } from './namespace.ts'
import { createContentStore, type ContentStore } from './content/index.ts'
import { createFileInfoRouter } from './file-info.ts'
import { createWebDav } from './webdav/index.ts'
import { gatewayErrorHandler } from './errors.ts'

export interface Gateway {
  /** The HTTP surface: `POST /file-info` and WebDAV on every other path. */
  app: Express
  namespace: Namespace
  content: ContentStore
  /** Stops timers and background work, then closes the database. */
  close(): Promise<void>
}

export interface GatewayDeps {
  logger: Logger
  /** Defaults to `<dataDir>/gateway.sqlite`. */
  db?: Db
}

/** Builds a gateway over `config.dataDir`: SQLite metadata plus block and CAR files. */
export function createGateway(config: GatewayConfig, deps: GatewayDeps): Gateway {
  const logger = deps.logger.child({ part: 'gateway' })
  const db = deps.db ?? openDatabase(join(config.dataDir, 'gateway.sqlite'))
  const namespace = createNamespace(db)
  const content = createContentStore({
    db,
    dir: config.dataDir,
    groupSize: config.groupSize,
    groupIdleMs: config.groupIdleSeconds * 1000,
    logger,
  })

  const app = express()
  app.disable('x-powered-by')
  app.set('etag', false)
  if (config.user && config.password) app.use(requireBasicAuth(config.user, config.password))
  app.use(createFileInfoRouter({ namespace, content, logger }))
  app.use(createWebDav({ namespace, content, db, logger }))
  app.use(gatewayErrorHandler(logger))

  return {
    app,
    namespace,
    content,
    async close() {
      await content.close()
      if (!deps.db) db.close()
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
