import express from 'express'
import { pino } from 'pino'
import { openDatabase, type Db } from '../../../server/shared/db.ts'
import { startServer } from '../../../server/shared/http.ts'
import { createNamespace, type Namespace } from '../../../server/gateway/namespace.ts'
import { createWebDav, type ContentSource } from '../../../server/gateway/webdav/index.ts'
import { createMemoryContent } from './memory-content.ts'

export interface DavHarness {
  url: string
  namespace: Namespace
  content: ContentSource
  db: Db
  close(): Promise<void>
}

/** The WebDAV handler alone on a loopback port, over an in-memory SQLite and content store. */
export async function startDav(content: ContentSource = createMemoryContent()): Promise<DavHarness> {
  const db = openDatabase(':memory:')
  const namespace = createNamespace(db)
  const app = express()
  app.use(createWebDav({ namespace, content, db, logger: pino({ level: process.env.DAV_LOG ?? 'silent' }) }))
  const server = await startServer(app, 0)
  return {
    url: server.url,
    namespace,
    content,
    db,
    async close() {
      await server.close(1000)
      db.close()
    },
  }
}
