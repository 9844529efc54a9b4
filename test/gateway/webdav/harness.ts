import express from 'express'
import { pino } from 'pino'
import { openSql, type Sql } from '../../../server/shared/sql/index.ts'
import { startServer } from '../../../server/shared/http.ts'
import { createNamespace, type Namespace } from '../../../server/gateway/namespace.ts'
import { createWebDav, type ContentSource } from '../../../server/gateway/webdav/index.ts'
import { testDatabaseUrl } from '../../helpers/stores.ts'
import { createMemoryContent } from './memory-content.ts'

export interface DavHarness {
  url: string
  namespace: Namespace
  content: ContentSource
  sql: Sql
  close(): Promise<void>
}

/**
 * The WebDAV handler alone on a loopback port, over an in-memory SQLite (or,
 * with TEST_STORE=postgres, a fresh PostgreSQL database) and content store.
 */
export async function startDav(content: ContentSource = createMemoryContent()): Promise<DavHarness> {
  const sql = await openSql({ file: ':memory:', databaseUrl: await testDatabaseUrl('gateway'), schema: 'gateway' })
  const namespace = await createNamespace(sql)
  const app = express()
  app.use(await createWebDav({ namespace, content, sql, logger: pino({ level: process.env.DAV_LOG ?? 'silent' }) }))
  const server = await startServer(app, 0)
  return {
    url: server.url,
    namespace,
    content,
    sql,
    async close() {
      await server.close(1000)
      await sql.close()
    },
  }
}
