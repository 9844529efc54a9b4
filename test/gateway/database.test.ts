/**
 * The gateway on PostgreSQL (DATABASE_URL): its records live in the
 * database, not in its data folder; one gateway per database; and what it
 * does when it loses its hold on the database.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { pino } from 'pino'
import { afterAll, expect, it } from 'vitest'
import { DatabaseInUse } from '../../server/gateway/database-lock.ts'
import { createGateway, type Gateway } from '../../server/gateway/index.ts'
import type { GatewayConfig } from '../../server/shared/config.ts'
import { startServer, type RunningServer } from '../../server/shared/http.ts'
import { describeEachStore } from '../helpers/stores.ts'

const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' })

describeEachStore(
  'the gateway on DATABASE_URL',
  ({ databaseUrl }) => {
    const dirs: string[] = []
    const folder = () => {
      const dir = mkdtempSync(join(tmpdir(), 'gateway-pg-'))
      dirs.push(dir)
      return dir
    }
    const config = (dataDir: string, databaseUrl: string): GatewayConfig => ({
      host: '127.0.0.1',
      port: 0,
      dataDir,
      databaseUrl,
      groupSize: 1 << 20,
      groupIdleSeconds: 3600,
    })
    const serve = async (gateway: Gateway) => {
      const server = await startServer(gateway.app, 0)
      const at = (path: string) => `${server.url}${path}`
      return { server, at }
    }
    const stop = async (gateway: Gateway, server: RunningServer) => {
      await server.close(100)
      await gateway.close()
    }

    afterAll(() => {
      for (const d of dirs) rmSync(d, { recursive: true, force: true })
    })

    it('keeps a file, its CID, its group and its deals when the data folder loses its SQLite files', async () => {
      const url = databaseUrl('survives')!
      const dataDir = folder()
      let gateway = await createGateway(config(dataDir, url), { logger })
      let { server, at } = await serve(gateway)
      expect((await fetch(at('/docs'), { method: 'MKCOL' })).status).toBe(201)
      const put = await fetch(at('/docs/report.txt'), { method: 'PUT', body: 'quarterly numbers\n' })
      expect(put.status).toBe(201)
      const cid = (await gateway.namespace.get('/docs/report.txt'))!.cid!
      await gateway.content.sealWritable()
      await gateway.content.settled()
      const [group] = await gateway.content.groupsOf(cid)
      expect(group.state).toBe('ready_for_deals')
      const deal = await gateway.dealStore.create({
        groupId: group.id,
        route: 'market',
        provider: 'f01000',
        pieceCid: group.pieceCid!,
        startEpoch: 100,
        endEpoch: 2000,
        tokenHash: 'h',
        proposalEpoch: 10,
      })
      await gateway.dealStore.markProposed(deal.id, { proposalId: 'deal-uuid-1' })
      await stop(gateway, server)

      // Whatever SQLite files the folder holds go; the blocks and CARs stay.
      for (const name of readdirSync(dataDir)) if (/\.sqlite/.test(name)) rmSync(join(dataDir, name))
      expect(readdirSync(dataDir).filter((n) => n.includes('.sqlite'))).toEqual([])

      gateway = await createGateway(config(dataDir, url), { logger })
      ;({ server, at } = await serve(gateway))
      try {
        const read = await fetch(at('/docs/report.txt'))
        expect(read.status).toBe(200)
        expect(await read.text()).toBe('quarterly numbers\n')
        const info = await fetch(at('/file-info'), {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ filePath: '/docs/report.txt', verbose: true }),
        })
        const file = (await info.json()).result.file
        expect(file.cid).toBe(cid)
        expect(file.details.groups).toEqual([
          expect.objectContaining({
            groupId: group.id,
            state: 'ready_for_deals',
            pieceCid: group.pieceCid,
            deals: [expect.objectContaining({ provider: 'f01000', state: 'proposed' })],
          }),
        ])
        expect((await gateway.dealStore.auditOf('deal-uuid-1'))!.events.map((e) => e.state)).toEqual(['proposing', 'proposed'])
        // And it goes on: a new upload lands in a new group, not over the old one.
        expect((await fetch(at('/docs/more.txt'), { method: 'PUT', body: 'more' })).status).toBe(201)
        const [newer] = await gateway.content.groupsOf((await gateway.namespace.get('/docs/more.txt'))!.cid!)
        expect(newer.id).toBeGreaterThan(group.id)
      } finally {
        await stop(gateway, server)
      }
    })

    it('refuses a second gateway on the same database, naming the first, and lets one start once the first has stopped', async () => {
      const url = databaseUrl('one_gateway')!
      const first = await createGateway(config(folder(), url), { logger })
      const second = createGateway(config(folder(), url), { logger })
      await expect(second).rejects.toThrow(DatabaseInUse)
      await expect(second).rejects.toThrow(
        /another gateway is running on this database \(gateway pid \d+ on .+\): one gateway per DATABASE_URL/,
      )
      await first.close()
      const third = await createGateway(config(folder(), url), { logger })
      expect(third.writable()).toBe(true)
      await third.close()
    })

    it('refuses writes with 503 while it has lost its hold on the database, serves reads, and takes the hold back', async () => {
      const url = databaseUrl('lock_lost')!
      const gateway = await createGateway(config(folder(), url), { logger })
      const { server, at } = await serve(gateway)
      const admin = new pg.Client({ connectionString: url })
      await admin.connect()
      try {
        expect((await fetch(at('/kept.txt'), { method: 'PUT', body: 'kept' })).status).toBe(201)
        // The server drops the lock's connection (a restart, a network cut, an admin).
        await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE 'gateway pid %'")
        await until(() => !gateway.writable())
        const refused = await fetch(at('/new.txt'), { method: 'PUT', body: 'new' })
        expect(refused.status).toBe(503)
        expect(refused.headers.get('retry-after')).toBeTruthy()
        expect(await refused.json()).toEqual({ success: false, error: expect.stringContaining('refuses writes') })
        expect(await gateway.namespace.get('/new.txt')).toBeUndefined()
        expect(await (await fetch(at('/kept.txt'))).text()).toBe('kept')
        // Back within its back-off (1 s first): writes work again.
        await until(() => gateway.writable())
        expect((await fetch(at('/new.txt'), { method: 'PUT', body: 'new' })).status).toBe(201)
      } finally {
        await admin.end()
        await stop(gateway, server)
      }
    })
  },
  { only: 'postgres' },
)

async function until(check: () => boolean, ms = 15_000): Promise<void> {
  for (const end = Date.now() + ms; !check();) {
    if (Date.now() > end) throw new Error('timed out waiting')
    await new Promise((r) => setTimeout(r, 20))
  }
}
