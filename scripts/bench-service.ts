/**
 * Deal service paging benchmark: with N deals (default 1 000 000) for one
 * tenant in the service's store (its SQLite file, or PostgreSQL with
 * --database-url), the p50/p99 time to serve one 10 000-deal page of
 * get-on-chain-deals over loopback HTTP, for both sort orders, and the peak
 * RSS of the process while paging through all of them.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { performance } from 'node:perf_hooks'
import { simnetFor } from '../server/compose/local-chain.ts'
import { createDealService } from '../server/service/index.ts'
import type { StoredDeal } from '../server/service/deal-store.ts'
import type { ServiceConfig } from '../server/shared/config.ts'
import { createLogger } from '../server/shared/logger.ts'
import { startServer } from '../server/shared/http.ts'

const HELP = `Usage: npm run bench:service -- [options]

  --deals <n>      deals to load for one tenant (default 1000000)
  --sort <s>       dealId | lastUpdate | both (default both)
  --keep <dir>     use (and keep) this data dir; reuses deals already loaded
  --database-url <url>  the store on PostgreSQL (schema service) instead of SQLite
  --url <url>      page a deal service already running there instead (with --api-key);
                   the benchmark runs its client this way, in a process of its own
  --api-key <key>  the tenant's key for --url
  -h, --help       this text

Targets: p50 under 150 ms per 10 000-deal page, peak RSS under 300 MB.
`
const { values: opts } = parseArgs({
  options: {
    deals: { type: 'string', default: '1000000' },
    sort: { type: 'string', default: 'both' },
    keep: { type: 'string' },
    'database-url': { type: 'string' },
    url: { type: 'string' },
    'api-key': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
})
if (opts.help) {
  process.stdout.write(HELP)
  process.exit(0)
}
const sorts = opts.sort === 'both' ? ['dealId', 'lastUpdate'] : [opts.sort!]

const MARKER = Buffer.from('"lastUpdate":')

/** Pages through every deal of the tenant behind `key`, each sort order, and prints p50/p99 per page. */
async function pageAll(url: string, key: string): Promise<void> {
  for (const sortBy of sorts) {
    const times: number[] = []
    let next: string | null = null
    let seen = 0
    for (;;) {
      const t0 = performance.now()
      const res = await fetch(`${url}/private/v1/get-on-chain-deals`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify(next ? { sortBy, next } : { sortBy }),
      })
      if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${await res.text()}`)
      // Read the stream without keeping it: count deals by a marker in the bytes (no strings
      // built, so the client is quick), keep only the tail (where `next` is).
      let count = 0
      let tail = Buffer.alloc(0)
      for await (const bytes of res.body!) {
        const chunk = Buffer.concat([tail, bytes as Uint8Array])
        // Markers wholly inside the carried tail were counted already.
        for (let at = chunk.indexOf(MARKER, Math.max(0, tail.length - MARKER.length + 1)); at !== -1; at = chunk.indexOf(MARKER, at + 1))
          count++
        tail = chunk.subarray(Math.max(0, chunk.length - 200))
      }
      const carry = tail.toString('utf8')
      const ms = performance.now() - t0
      const pageNext = (JSON.parse(`{${carry.slice(carry.lastIndexOf('"next":'))}`) as { next: string | null }).next
      if (count === 0) break
      times.push(ms)
      seen += count
      next = pageNext
    }
    times.sort((a, b) => a - b)
    const q = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))].toFixed(1)
    process.stdout.write(
      `sortBy=${sortBy}: ${seen} deals in ${times.length} pages; per page p50 ${q(0.5)} ms, p99 ${q(0.99)} ms, max ${q(1)} ms\n`,
    )
  }
}

if (opts.url) {
  if (!opts['api-key']) throw new Error('--url needs --api-key')
  await pageAll(opts.url, opts['api-key'])
  process.exit(0)
}

const total = Number(opts.deals)
if (!Number.isInteger(total) || total <= 0) throw new Error('--deals must be a positive integer')

const dir = opts.keep ?? mkdtempSync(join(tmpdir(), 'bench-service-'))
const config: ServiceConfig = {
  host: '127.0.0.1',
  port: 0,
  dataDir: dir,
  databaseUrl: opts['database-url'],
  network: 'simnet',
  simnetGenesis: 1704067200,
  simnetSeed: 'bench',
  simnetSpeed: 1,
  tickerPollSeconds: 60,
  tickerEnabled: false,
}
// The deals are loaded straight into the store; the simulated chain in this process is only there to be the service's network.
const service = await createDealService(config, { logger: createLogger('silent'), network: simnetFor(config), background: false })
const tenant = (await service.tenants.byName('default'))!
const have = await service.deals.count(tenant.id)
if (have < total) {
  const t0 = performance.now()
  const now = Date.now()
  const statuses = ['active', 'active', 'active', 'published', 'expired', 'slashed', 'published-expired'] as const
  for (let start = have; start < total; start += 50_000) {
    const batch: StoredDeal[] = []
    for (let i = start; i < Math.min(total, start + 50_000); i++) {
      const status = statuses[i % statuses.length]
      batch.push({
        dealId: 60_000_000 + i,
        // Many deals share a lastUpdate, as after a sync.
        lastUpdateMs: now - (i % 5000) * 1000,
        proposal: {
          PieceCID: { '/': `baga6ea4seaq${i.toString(32).padStart(52, 'a')}` },
          PieceSize: 34359738368,
          VerifiedDeal: i % 3 !== 0,
          Client: 'f01306860',
          Provider: `f0${2000 + (i % 400)}`,
          Label: `bafykbzaceb${i.toString(36).padStart(48, 'q')}`,
          StartEpoch: 4_000_000 + (i % 100_000),
          EndEpoch: 5_600_000 + (i % 100_000),
          StoragePricePerEpoch: '0',
          ProviderCollateral: '9182723473928282',
          ClientCollateral: '0',
        },
        state: {
          status,
          publishedEpoch: 3_990_000 + (i % 100_000),
          onChainStartEpoch: status === 'published' ? -1 : 4_000_000,
          onChainEndEpoch: status === 'expired' ? 5_600_000 : -1,
        },
      })
    }
    await service.deals.insertMany(tenant.id, batch)
  }
  process.stdout.write(`loaded ${total - have} deals in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`)
  // Measure in a fresh process: the loader's heap would otherwise count as the service's RSS.
  await service.close()
  const args = [...process.execArgv, process.argv[1], '--deals', String(total), '--sort', opts.sort!, '--keep', dir]
  if (opts['database-url']) args.push('--database-url', opts['database-url'])
  const child = spawn(process.execPath, args, { stdio: 'inherit' })
  const [code] = (await once(child, 'exit')) as [number | null]
  if (!opts.keep) rmSync(dir, { recursive: true, force: true })
  process.exit(code ?? 1)
}

const server = await startServer(service.app, 0)
process.stdout.write(`RSS before paging: ${(process.memoryUsage().rss / 1024 / 1024).toFixed(0)} MB\n`)
let peakRss = process.memoryUsage().rss
const sample = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20)
const key = service.createdApiKey ?? readFileSync(join(dir, 'api-key'), 'utf8').trim()
// The client in a process of its own, as a real one is: its reading neither slows the service's thread nor counts in its RSS.
const client = spawn(
  process.execPath,
  [...process.execArgv, process.argv[1], '--url', server.url, '--api-key', key, '--sort', opts.sort!],
  { stdio: 'inherit' },
)
const [clientCode] = (await once(client, 'exit')) as [number | null]
clearInterval(sample)
process.stdout.write(
  `peak RSS of the service while paging: ${(peakRss / 1024 / 1024).toFixed(0)} MB${opts['database-url'] ? ' (PostgreSQL apart)' : ''}\n`,
)
if (clientCode !== 0) process.exitCode = 1
await server.close(100)
await service.close()
if (!opts.keep) rmSync(dir, { recursive: true, force: true })
