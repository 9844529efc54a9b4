/**
 * The README's recipe "Several replicas on PostgreSQL", run for real: one
 * PostgreSQL, two deal services (the second reading the simulated network the
 * first runs), one gateway, two app surfaces, and nginx in front of each pair
 * (scripts/nginx/replicas.conf), every part its own `npm start -- --role`
 * process. nginx takes turns between the replicas of a pair, and says which
 * one answered, so each test shows one replica carrying on what the other began.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SETTINGS_REFRESH_MS } from '../../server/bridge/settings-store.ts'
import { SIMNET_RPC_PATH } from '../../server/simulation/simnet/rpc-server.ts'
import { NGINX, recipe, startNginx, type RunningNginx } from '../helpers/nginx.ts'
import { freePort } from '../../scripts/lib/ports.ts'
import { describeEachStore } from '../helpers/stores.ts'
import { basicAuth, startPart, type RunningPart } from '../../scripts/lib/stack.ts'

const ADMIN_PASSWORD = 'admin-password-1'
const API_KEY = 'fgs_replicas-test-key-0123456789'
const admin = basicAuth('admin', ADMIN_PASSWORD)

describe.skipIf(!NGINX)(`behind nginx${NGINX ? '' : ' (skipped: nginx is not installed)'}`, () => {
  describeEachStore(
    'two app surfaces and two deal services on one database',
    ({ databaseUrl: newDatabase }) => {
      let databaseUrl: string
      let dataDir: string
      let nginx: RunningNginx
      const parts: RunningPart[] = []
      let app: string
      let deals: string

      beforeAll(async () => {
        databaseUrl = newDatabase('replicas')!
        dataDir = mkdtempSync(join(tmpdir(), 'replicas-'))
        // Only what must be known before its process starts is chosen ahead; the rest listen on port 0.
        const [rpc, appPort, dealsPort] = await Promise.all([freePort(), freePort(), freePort()])
        // One machine, one DATA_DIR: the gateway's files, the simulated chain's saved clock, the bridges' upload chunks.
        const common = {
          DATABASE_URL: databaseUrl,
          DATA_DIR: dataDir,
          API_KEY,
          ADMIN_PASSWORD,
          GATEWAY_USER: 'gateway',
          GATEWAY_PASSWORD: 'gateway-password',
          SIMNET_SPEED: '1000',
        }
        const rpcUrl = `http://127.0.0.1:${rpc}${SIMNET_RPC_PATH}`
        // Each part is kept as soon as it runs, so afterAll stops it even if a later one fails to start.
        const started = async (...starting: Promise<RunningPart>[]) => {
          const settled = await Promise.allSettled(starting)
          for (const s of settled) if (s.status === 'fulfilled') parts.push(s.value)
          const failed = settled.find((s) => s.status === 'rejected')
          if (failed) throw failed.reason
          return settled.map((s) => (s as PromiseFulfilledResult<RunningPart>).value)
        }
        const [serviceA] = await started(
          startPart('service', { ...common, SERVICE_PORT: '0', SIMNET_RPC_PORT: String(rpc), SIMFOC_RPC_PORT: '0' }),
        )
        const [serviceB] = await started(startPart('service', { ...common, SERVICE_PORT: '0', SIMNET_RPC_URL: rpcUrl }))
        const [gateway] = await started(
          startPart('gateway', {
            ...common,
            GATEWAY_PORT: '0',
            SERVICE_URL: `http://127.0.0.1:${dealsPort}`,
            SERVICE_API_KEY: API_KEY,
            SIMNET_RPC_URL: rpcUrl,
          }),
        )
        const bridge = { ...common, GATEWAY_URL: gateway.url, TRUST_PROXY: 'loopback' }
        const [bridgeA, bridgeB] = await started(startPart('app', { ...bridge, PORT: '0' }), startPart('app', { ...bridge, PORT: '0' }))
        const port = (part: RunningPart) => new URL(part.url).port

        const servers = recipe('replicas.conf')
          .replace('server 127.0.0.1:8080;', `server 127.0.0.1:${port(bridgeA)};`)
          .replace('server 127.0.0.1:8082;', `server 127.0.0.1:${port(bridgeB)};`)
          .replace('server 127.0.0.1:8090;', `server 127.0.0.1:${port(serviceA)};`)
          .replace('server 127.0.0.1:8092;', `server 127.0.0.1:${port(serviceB)};`)
          .replace('listen 80;', `listen 127.0.0.1:${appPort};`)
          .replace('listen 8000;', `listen 127.0.0.1:${dealsPort};`)
          // Which replica answered, for the assertions below.
          .replaceAll('location / {', 'location / {\n        add_header X-Replica $upstream_addr always;')
        nginx = await startNginx(servers, dealsPort)
        app = `http://127.0.0.1:${appPort}`
        deals = `http://127.0.0.1:${dealsPort}`
      }, 120_000)

      afterAll(async () => {
        await nginx?.stop()
        for (const part of parts.reverse()) await part.stop()
        if (dataDir) rmSync(dataDir, { recursive: true, force: true })
      }, 60_000)

      const replica = (res: Response) => res.headers.get('x-replica')
      const ocs = { 'ocs-apirequest': 'true', 'content-type': 'application/json' }

      it('logs in through one app surface and reads file metadata through the other', async () => {
        const put = await fetch(`${app}/remote.php/dav/files/admin/hello.txt`, {
          method: 'PUT',
          headers: { authorization: admin },
          body: 'hello from a replica',
        })
        expect(put.status).toBe(201)

        const login = await fetch(`${app}/login`, {
          method: 'POST',
          redirect: 'manual',
          body: new URLSearchParams({ user: 'admin', password: ADMIN_PASSWORD }),
        })
        expect(login.status).toBe(303)
        const cookie = login.headers.getSetCookie()[0].split(';')[0]
        const loggedInAt = replica(login)

        const token = await fetch(`${app}/csrftoken`, { headers: { cookie } })
        expect(token.status).toBe(200)
        const { token: requestToken } = (await token.json()) as { token: string }

        const servedBy = new Set<string | null>()
        for (let i = 0; i < 4; i++) {
          const res = await fetch(`${app}/ocs/v2.php/apps/gateway/get-file-metadata`, {
            method: 'POST',
            headers: { ...ocs, cookie, requesttoken: requestToken },
            body: JSON.stringify({ filePath: '/hello.txt' }),
          })
          expect(res.status).toBe(200)
          const body = (await res.json()) as { metadata: { file: { cid: string; file: string } } }
          expect(body.metadata.file).toMatchObject({ file: 'hello.txt', cid: expect.stringMatching(/^bafk/) })
          servedBy.add(replica(res))
        }
        expect(servedBy.size).toBe(2)
        expect([...servedBy].some((r) => r !== loggedInAt)).toBe(true)
      })

      it("has an admin's saved setting in force on both app surfaces within the settings refresh interval", async () => {
        // The admin page saves the whole form: what it read, with one field changed.
        const read = await fetch(`${app}/ocs/v2.php/apps/gateway/admin/settings`, { headers: { ...ocs, authorization: admin } })
        const { gatewayPasswordSet: _set, ...form } = ((await read.json()) as { settings: Record<string, unknown> }).settings
        const save = await fetch(`${app}/ocs/v2.php/apps/gateway/admin/settings`, {
          method: 'PUT',
          headers: { ...ocs, authorization: admin },
          body: JSON.stringify({ ...form, ipfsGateway: 'https://dweb.example.org' }),
        })
        expect(save.status).toBe(200)
        // Each replica reads the settings from memory, and the saved ones from PostgreSQL once an interval.
        await new Promise((resolve) => setTimeout(resolve, SETTINGS_REFRESH_MS + 500))
        const seen = new Map<string | null, string>()
        for (let i = 0; i < 4; i++) {
          const res = await fetch(`${app}/ocs/v2.php/apps/gateway/admin/settings`, { headers: { ...ocs, authorization: admin } })
          expect(res.status).toBe(200)
          seen.set(replica(res), ((await res.json()) as { settings: { ipfsGateway: string } }).settings.ipfsGateway)
        }
        expect(seen.size).toBe(2)
        expect([...seen.values()]).toEqual(['https://dweb.example.org', 'https://dweb.example.org'])
      })

      it('pages on-chain deals across both deal services, one cursor carrying on where the other stopped', async () => {
        // 25 000 deals of the default tenant, loaded straight into the service's schema: three pages of up to 10 000.
        const client = new pg.Client({ connectionString: databaseUrl })
        await client.connect()
        try {
          const { rows } = await client.query(`SELECT id FROM service.tenants WHERE name = 'default'`)
          const proposal = JSON.stringify({
            PieceCID: { '/': 'baga6ea4seaqao7s73y24kcutaosvacpdjgseha7mk2xjl5byvqz6vp6w5a3bkxi' },
            Provider: 'f01000',
          })
          await client.query(
            `INSERT INTO service.deals (tenant_id, deal_id, last_update_ms, piece_cid, provider, status, published_epoch, start_epoch, end_epoch, page_entry)
           SELECT $1, 10000000 + n, 1700000000000 + (n % 97) * 1000, 'baga', 'f01000', 'active', 1, 2, 3,
             '"' || (10000000 + n) || '":{"lastUpdate":' || (1700000000 + n % 97) || ',"proposal":' || $2::text || ',"state":{"status":"active","publishedEpoch":1,"onChainStartEpoch":2,"onChainEndEpoch":-1}}'
           FROM generate_series(1, 25000) AS n`,
            [rows[0].id, proposal],
          )
        } finally {
          await client.end()
        }

        for (const sortBy of ['dealId', 'lastUpdate']) {
          const ids: number[] = []
          const servedBy = new Set<string | null>()
          let next: string | null = null
          let pages = 0
          do {
            const res = await fetch(`${deals}/private/v1/get-on-chain-deals`, {
              method: 'POST',
              headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' },
              body: JSON.stringify({ sortBy, next }),
            })
            expect(res.status).toBe(200)
            servedBy.add(replica(res))
            const page = (await res.json()) as { result: Record<string, unknown>; next: string | null }
            ids.push(...Object.keys(page.result).map(Number))
            next = Object.keys(page.result).length > 0 ? page.next : null
            pages++
          } while (next)
          expect(servedBy.size).toBe(2)
          expect(pages).toBeGreaterThanOrEqual(3)
          // Every deal once: the loaded ones and the demo client's seeded ones.
          expect(new Set(ids).size).toBe(ids.length)
          expect(ids.filter((id) => id > 10_000_000 && id <= 10_025_000)).toHaveLength(25_000)
          if (sortBy === 'dealId') expect(ids).toEqual([...ids].sort((a, b) => a - b))
        }
      })

      // Last: it leaves 127.0.0.1 throttled on both app surfaces.
      it('counts failed logins across both app surfaces and then refuses the address on each of them', async () => {
        // Ten wrong passwords at once: nginx splits them between the two, neither sees ten on its own.
        const attempts = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            fetch(`${app}/ocs/v2.php/cloud/user?format=json`, { headers: { authorization: basicAuth('admin', `wrong-password-${i}`) } }),
          ),
        )
        expect(attempts.map((r) => r.status)).toEqual(Array(10).fill(401))
        expect(new Set(attempts.map(replica)).size).toBe(2)

        const refusedBy = new Set<string | null>()
        for (let i = 0; i < 2; i++) {
          // The right password too: the address is refused before any check.
          const res = await fetch(`${app}/ocs/v2.php/cloud/user?format=json`, { headers: { authorization: admin } })
          expect(res.status).toBe(429)
          expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0)
          refusedBy.add(replica(res))
        }
        expect(refusedBy.size).toBe(2)
      })
    },
    { only: 'postgres' },
  )
})
