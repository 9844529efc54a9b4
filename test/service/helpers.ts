import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSimnet, type Simnet } from '../../server/simulation/simnet/index.ts'
import { formatAddress } from '../../server/shared/address.ts'
import type { ServiceConfig } from '../../server/shared/config.ts'
import { createLogger } from '../../server/shared/logger.ts'
import { startServer, type RunningServer } from '../../server/shared/http.ts'
import { createDealService, type DealService, type DealServiceDeps } from '../../server/service/index.ts'
import { testDatabaseUrl } from '../helpers/stores.ts'

/** A fixed instant well after the simulated genesis (2024-01-01), so head epochs are stable. */
export const T0 = Date.UTC(2025, 0, 15, 12, 0, 0)
export const SIMNET_GENESIS = 1704067200

export interface TestService {
  service: DealService
  simnet: Simnet
  server: RunningServer
  url: string
  key: string
  clock: { now: number }
  dir: string
  post(path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; json: any; text: string }>
  close(): Promise<void>
}

/** The default tenant's client address in these tests (an f1 address made from the seed, as the demo client is). */
export const TEST_CLIENT = formatAddress('mainnet', 1, createHash('sha256').update('client:test-seed').digest().subarray(0, 20))

export function serviceConfig(dir: string, overrides: Partial<ServiceConfig> = {}): ServiceConfig {
  return {
    host: '127.0.0.1',
    port: 0,
    dataDir: dir,
    network: 'simnet',
    simnetGenesis: SIMNET_GENESIS,
    simnetSeed: 'test-seed',
    clientAddress: TEST_CLIENT,
    simnetSpeed: 1,
    tickerPollSeconds: 60,
    tickerEnabled: false,
    ...overrides,
  }
}

/**
 * A deal service on 127.0.0.1:0 over a seeded simnet and an injected clock; its
 * store is a SQLite file in a temp dir, or with TEST_STORE=postgres a fresh
 * PostgreSQL database (the same HTTP tests on the other dialect).
 */
export async function startTestService(
  options: { deps?: Partial<DealServiceDeps>; config?: Partial<ServiceConfig> } = {},
): Promise<TestService> {
  const dir = mkdtempSync(join(tmpdir(), 'service-test-'))
  const clock = { now: T0 }
  const now = () => clock.now
  const simnet = createSimnet({ seed: 'test-seed', genesis: SIMNET_GENESIS, now })
  const databaseUrl = options.config?.databaseUrl || options.deps?.sql ? undefined : await testDatabaseUrl('service')
  const config = serviceConfig(dir, { ...(databaseUrl && { databaseUrl }), ...options.config })
  const service = await createDealService(config, {
    logger: createLogger('silent'),
    network: simnet,
    now,
    background: false,
    ...options.deps,
  })
  const server = await startServer(service.app, 0)
  const key = options.config?.apiKey ?? service.createdApiKey!
  const post = async (path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const init: RequestInit = { method: 'POST', headers: { 'x-api-key': key, ...headers } }
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body)
      ;(init.headers as Record<string, string>)['content-type'] ??= 'application/json'
    }
    const res = await fetch(server.url + path, init)
    const text = await res.text()
    let json: unknown
    try {
      json = text ? JSON.parse(text) : undefined
    } catch {
      json = undefined
    }
    return { status: res.status, json, text }
  }
  return {
    service,
    simnet,
    server,
    url: server.url,
    key,
    clock,
    dir,
    post,
    async close() {
      await server.close(100)
      await service.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** Asserts the error envelope: a UUID code, a message, and no `result`. */
export function expectErrorEnvelope(json: any): void {
  if (!json || typeof json !== 'object') throw new Error(`not an error envelope: ${JSON.stringify(json)}`)
  if (!UUID.test(json.error?.code)) throw new Error(`error.code is not a UUID: ${JSON.stringify(json)}`)
  if (typeof json.error?.message !== 'string' || json.error.message.length === 0) throw new Error('error.message missing')
  if ('result' in json) throw new Error('error envelope carries a result')
}
