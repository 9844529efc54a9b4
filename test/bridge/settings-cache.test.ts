/**
 * The admin's gateway link settings are read from memory on every request:
 * a save through the admin route is in force on the next request, and on
 * PostgreSQL another replica picks it up within its refresh interval, with
 * one small query per interval instead of one per request.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createBridge, type Bridge } from '../../server/bridge/index.ts'
import type { BridgeConfig } from '../../server/shared/config.ts'
import { startServer, type RunningServer } from '../../server/shared/http.ts'
import { openSql, type Sql } from '../../server/shared/sql/index.ts'
import { describeEachStore } from '../helpers/stores.ts'
import { ADMIN_PASSWORD, RECORDED_FILE_INFO, aliceAuth, basic, logger, postMetadata, startFakeGateway } from './helpers.ts'

const SETTINGS = '/ocs/v2.php/apps/gateway/admin/settings'
const TAB_CONFIG = '/ocs/v2.php/apps/gateway/config'
const admin = { authorization: basic('admin', ADMIN_PASSWORD), 'ocs-apirequest': 'true', 'content-type': 'application/json' }
const FORM = { gatewayUrl: '', gatewayUser: '', pathMap: '/{user}', network: 'mainnet', ipfsGateway: 'https://ipfs.io' }

/** Passes every statement through to `sql`, noting the text of each, also inside transactions. */
function countingSql(sql: Sql, statements: string[]): Sql {
  const note = (text: string) => void statements.push(text)
  return {
    dialect: sql.dialect,
    all<T>(text: string, params?: readonly unknown[]) {
      note(text)
      return sql.all<T>(text, params)
    },
    column<T>(text: string, params?: readonly unknown[]) {
      note(text)
      return sql.column<T>(text, params)
    },
    get<T>(text: string, params?: readonly unknown[]) {
      note(text)
      return sql.get<T>(text, params)
    },
    run(text, params) {
      note(text)
      return sql.run(text, params)
    },
    exec(text) {
      note(text)
      return sql.exec(text)
    },
    transaction: (fn) => sql.transaction((tx) => fn(countingSql(tx, statements))),
    exclusively: (name, fn) => sql.exclusively(name, fn),
    close: () => sql.close(),
  }
}

const settingsReads = (statements: string[]) => statements.filter((s) => /SELECT[\s\S]*FROM gateway_link/.test(s)).length

interface Replica {
  bridge: Bridge
  server: RunningServer
  statements: string[]
  close(): Promise<void>
}

async function startReplica(config: BridgeConfig, sql: Sql, settingsRefreshMs?: number): Promise<Replica> {
  const statements: string[] = []
  const bridge = await createBridge(config, { logger, print: () => {}, sql: countingSql(sql, statements), settingsRefreshMs })
  const server = await startServer(bridge.listener, 0, '127.0.0.1', bridge.serverOptions)
  return {
    bridge,
    server,
    statements,
    async close() {
      await server.close(50)
      await bridge.close()
    },
  }
}

const bridgeConfig = (gatewayUrl: string, dataDir: string, databaseUrl?: string): BridgeConfig => ({
  host: '127.0.0.1',
  port: 0,
  dataDir,
  databaseUrl,
  network: 'mainnet',
  simnetGenesis: 1704067200,
  gatewayUrl,
  gatewayTimeoutMs: 5_000,
  adminPassword: ADMIN_PASSWORD,
  pathMap: '/{user}',
  ipfsGateway: 'https://ipfs.io',
})

async function readSettings(url: string): Promise<{ ipfsGateway: string; pathMap: string }> {
  const res = await fetch(url + SETTINGS, { headers: admin })
  expect(res.status).toBe(200)
  return ((await res.json()) as { settings: { ipfsGateway: string; pathMap: string } }).settings
}

async function save(url: string, form: Record<string, unknown>): Promise<void> {
  const res = await fetch(url + SETTINGS, { method: 'PUT', headers: admin, body: JSON.stringify({ ...FORM, ...form }) })
  expect(res.status).toBe(200)
}

/** The last file question the gateway got (the bridge also asks it POST /status for its network). */
const lastFileInfo = (requests: { url: string; body: unknown }[]) => requests.filter((r) => r.url === '/file-info').at(-1)?.body

describe('admin settings cached in memory (SQLite)', () => {
  let gateway: Awaited<ReturnType<typeof startFakeGateway>>
  let dataDir: string
  let sql: Sql
  let replica: Replica

  beforeAll(async () => {
    gateway = await startFakeGateway((app) => {
      app.post('/file-info', (_req, res) => {
        res.json(RECORDED_FILE_INFO)
      })
    })
    dataDir = mkdtempSync(join(tmpdir(), 'settings-cache-'))
    sql = await openSql({ file: join(dataDir, 'app.sqlite'), schema: 'bridge' })
    replica = await startReplica(bridgeConfig(gateway.url, dataDir), sql)
    await replica.bridge.users.add({ id: 'alice', password: 'alice-password-1' })
  })
  afterAll(async () => {
    await replica?.close()
    await sql?.close()
    await gateway?.close()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('reads no settings from SQL on requests, and has a save through the admin route in force on the next one', async () => {
    replica.statements.length = 0
    for (let i = 0; i < 5; i++) {
      expect((await postMetadata({ url: replica.server.url, body: { filePath: '/docs/a.txt' } })).status).toBe(200)
      expect(
        (await fetch(replica.server.url + TAB_CONFIG, { headers: { authorization: aliceAuth, 'ocs-apirequest': 'true' } })).status,
      ).toBe(200)
      await readSettings(replica.server.url)
    }
    // 15 requests, and the metadata route (the fast lane), the tab's config and the admin page all read memory.
    expect(settingsReads(replica.statements)).toBe(0)
    expect(lastFileInfo(gateway.requests)).toMatchObject({ filePath: '/alice/docs/a.txt' })

    await save(replica.server.url, { pathMap: '/archive/{user}', ipfsGateway: 'https://dweb.example.org' })
    expect(await readSettings(replica.server.url)).toMatchObject({ pathMap: '/archive/{user}', ipfsGateway: 'https://dweb.example.org' })
    expect((await postMetadata({ url: replica.server.url, body: { filePath: '/docs/a.txt' } })).status).toBe(200)
    expect(lastFileInfo(gateway.requests)).toMatchObject({ filePath: '/archive/alice/docs/a.txt' })
    // The save wrote the row (and read back its revision); nothing read it again.
    expect(settingsReads(replica.statements)).toBe(0)
  })
})

describeEachStore(
  'admin settings shared by two replicas',
  ({ databaseUrl: newDatabase }) => {
    const REFRESH_MS = 300
    let dataDir: string
    const stores: Sql[] = []
    let one: Replica
    let two: Replica

    beforeAll(async () => {
      const databaseUrl = newDatabase('settings_cache')!
      dataDir = mkdtempSync(join(tmpdir(), 'settings-cache-pg-'))
      const config = bridgeConfig('http://127.0.0.1:9', dataDir, databaseUrl)
      for (let i = 0; i < 2; i++) stores.push(await openSql({ databaseUrl, file: '', schema: 'bridge' }))
      one = await startReplica(config, stores[0], REFRESH_MS)
      two = await startReplica(config, stores[1], REFRESH_MS)
    }, 60_000)
    afterAll(async () => {
      await one?.close()
      await two?.close()
      for (const sql of stores) await sql.close()
      if (dataDir) rmSync(dataDir, { recursive: true, force: true })
    })

    it('has a save on one replica in force on the other within the refresh interval', async () => {
      expect((await readSettings(two.server.url)).ipfsGateway).toBe('https://ipfs.io')
      await save(one.server.url, { ipfsGateway: 'https://dweb.example.org' })
      const saved = Date.now()
      expect((await readSettings(one.server.url)).ipfsGateway).toBe('https://dweb.example.org')
      let seenAfterMs: number | undefined
      while (seenAfterMs === undefined && Date.now() - saved < 5 * REFRESH_MS) {
        if ((await readSettings(two.server.url)).ipfsGateway === 'https://dweb.example.org') seenAfterMs = Date.now() - saved
        else await new Promise((resolve) => setTimeout(resolve, 20))
      }
      expect(seenAfterMs).toBeDefined()
      // One interval, and the refresh query's own time on a busy machine.
      expect(seenAfterMs!).toBeLessThan(REFRESH_MS + 500)
    })

    it('reads the settings once per interval, however many requests come', async () => {
      two.statements.length = 0
      const started = Date.now()
      await Promise.all(Array.from({ length: 40 }, () => readSettings(two.server.url)))
      const intervals = Math.ceil((Date.now() - started) / REFRESH_MS)
      expect(settingsReads(two.statements)).toBeLessThanOrEqual(intervals + 1)
    })
  },
  { only: 'postgres' },
)
