import express, { type Express } from 'express'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { request as httpRequest } from 'node:http'
import type { BridgeConfig } from '../../server/shared/config.ts'
import { createLogger } from '../../server/shared/logger.ts'
import { startServer, type RunningServer } from '../../server/shared/http.ts'
import { createBridge, type Bridge, type BridgeDeps } from '../../server/bridge/index.ts'
import { testDatabaseUrl } from '../helpers/stores.ts'

export const ALICE = { user: 'alice', password: 'alice-password-1' }
export const BOB = { user: 'bob', password: 'bob-password-1' }
export const ADMIN_PASSWORD = 'admin-password-1'

export const basic = (user: string, password: string) => 'Basic ' + Buffer.from(`${user}:${password}`).toString('base64')
export const aliceAuth = basic(ALICE.user, ALICE.password)

export const logger = createLogger('silent')

export interface TestBridge {
  bridge: Bridge
  server: RunningServer
  url: string
  dataDir: string
  close(): Promise<void>
}

/** A bridge on a temp data dir and a free port, with users alice and bob. */
export async function startBridge(
  gatewayUrl: string,
  config: Partial<BridgeConfig> = {},
  deps: Partial<BridgeDeps> = {},
): Promise<TestBridge> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bridge-test-'))
  const bridge = await createBridge(
    {
      host: '127.0.0.1',
      port: 0,
      dataDir,
      network: 'mainnet',
      simnetGenesis: 1704067200,
      gatewayUrl,
      gatewayTimeoutMs: 5_000,
      adminPassword: ADMIN_PASSWORD,
      pathMap: '/{user}',
      ipfsGateway: 'https://ipfs.io',
      ...config,
    },
    { logger, print: () => {}, ...deps },
  )
  await bridge.users.add({ id: ALICE.user, password: ALICE.password, displayName: 'Alice Liddell' })
  await bridge.users.add({ id: BOB.user, password: BOB.password })
  const server = await startServer(bridge.listener, 0, '127.0.0.1', bridge.serverOptions)
  return {
    bridge,
    server,
    url: server.url,
    dataDir,
    async close() {
      await server.close(100)
      await bridge.close()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/** A stand-in gateway on loopback for what cannot run for real: quirky, broken or slow gateways. */
export async function startFakeGateway(
  setup: (app: Express) => void,
): Promise<RunningServer & { requests: { method: string; url: string; body: unknown }[] }> {
  const requests: { method: string; url: string; body: unknown }[] = []
  const app = express()
  app.use(express.json())
  app.use((req, _res, next) => {
    requests.push({ method: req.method, url: req.originalUrl, body: req.body })
    next()
  })
  setup(app)
  const server = await startServer(app, 0)
  const close = server.close
  return Object.assign(server, { requests, close: (grace = 50) => close(grace) })
}

/** The shape the gateway's `POST /file-info` answers with for one file, as recorded. */
export const RECORDED_FILE_INFO = {
  success: true,
  result: {
    file: {
      cid: 'bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku',
      path: '/alice/docs',
      file: 'report.pdf',
      details: {
        state: 'partially_offloaded',
        retrievableCopies: 1,
        groups: [
          {
            state: 'ready_for_deals',
            pieceCid: 'baga6ea4seaqao7s73y24kcutaosvacpdjgfe5pw76ooefnyqw4ynr3d2y6x2mpq',
            retrievableCopies: 1,
            deals: [
              { provider: 'f01234', state: 'active', dealId: 901, endEpoch: 4_500_000, isRetrievable: true },
              { provider: 'f05678', state: 'published', dealId: 902, endEpoch: 4_600_000, isRetrievable: false },
            ],
          },
        ],
      },
    },
  },
}

export interface MetadataCall {
  url: string
  /** The OCS route; the file-metadata route by default. */
  route?: string
  body?: unknown
  raw?: string
  auth?: string | null
  headers?: Record<string, string>
}

/** POSTs to an OCS route (file metadata by default) with the headers a real client sends, unless told otherwise. */
export async function postMetadata(call: MetadataCall): Promise<{ status: number; headers: Headers; body: any }> {
  const headers: Record<string, string> = { 'ocs-apirequest': 'true', 'content-type': 'application/json', ...call.headers }
  const auth = call.auth === undefined ? aliceAuth : call.auth
  if (auth !== null) headers.authorization = auth
  const res = await fetch(`${call.url}${call.route ?? '/ocs/v2.php/apps/gateway/get-file-metadata'}`, {
    method: 'POST',
    headers,
    body: call.raw ?? JSON.stringify(call.body ?? { filePath: '/docs/report.pdf' }),
  })
  const text = await res.text()
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch {
    // Left as text: the test will say what it expected.
  }
  return { status: res.status, headers: res.headers, body }
}

/** The real gateway (server/gateway) on a temp dir and a free port, behind a service account. */
export async function startRealGateway(): Promise<{ url: string; user: string; password: string; close(): Promise<void> }> {
  const { createGateway } = await import('../../server/gateway/index.ts')
  const dataDir = mkdtempSync(join(tmpdir(), 'bridge-gw-'))
  const user = 'bridge'
  const password = 'gateway-service-password'
  const gateway = await createGateway(
    {
      host: '127.0.0.1',
      port: 0,
      dataDir,
      databaseUrl: await testDatabaseUrl('gateway'),
      network: 'mainnet',
      user,
      password,
      groupSize: 1 << 20,
      groupIdleSeconds: 60,
    },
    { logger },
  )
  const server = await startServer(gateway.app, 0)
  return {
    url: server.url,
    user,
    password,
    async close() {
      await server.close(100)
      await gateway.close()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/** A bridge in front of a real gateway. */
export async function startBridgeOnRealGateway(config: Partial<BridgeConfig> = {}, deps: Partial<BridgeDeps> = {}) {
  const gateway = await startRealGateway()
  const t = await startBridge(gateway.url, { gatewayUser: gateway.user, gatewayPassword: gateway.password, ...config }, deps)
  return {
    ...t,
    gateway,
    async close() {
      await t.close()
      await gateway.close()
    },
  }
}

/** Sends a path exactly as given (fetch would resolve `..` and `%2e%2e` before sending). */
export function rawRequest(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  const url = new URL(baseUrl)
  return new Promise((resolve, reject) => {
    const req = httpRequest({ hostname: url.hostname, port: url.port, method, path, headers }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => (body += c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on('error', reject)
    req.end()
  })
}
