/**
 * Measures, on loopback, in one run:
 *  1. get-file-metadata through the bridge versus /file-info on the gateway directly
 *     (requests/s, p50/p99 latency, ratio);
 *  2. ingest of a large upload through WebDAV to CID + CAR + piece CID versus
 *     node's own SHA-256 over the same bytes (MB/s, ratio);
 *  3. the sidebar tab's budgets: its initial JavaScript, gzipped (from the
 *     built js/), and the time from opening the tab on the preview page to the
 *     record shown (Debian's chromium through playwright-core, median).
 *  4. (deals) CPU seconds and peak RSS of the gateway process per GiB onboarded,
 *     from the first PUT until every group is `offloaded` on a sped-up
 *     simulated network, for 1 to 10 000 small files and one large file.
 *  5. (offloaded-read) first byte and MB/s of reading one 1 MiB file out of an
 *     offloaded 256 MiB group, before (the whole group reloaded) and after
 *     (only the file's blocks fetched from providers), with the bytes fetched.
 *  6. (retire) USDFC a month the PDP copies of 1 000 files cost once half of
 *     them are deleted, with every copy kept and after retirement.
 * The gateway and the app surface run as separate processes (`--role`), as deployed.
 */
import { DatabaseSync } from 'node:sqlite'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { createHash, randomFillSync } from 'node:crypto'
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { once } from 'node:events'
import { parseArgs } from 'node:util'
import { gzipSync } from 'node:zlib'
import autocannon from 'autocannon'
import { ensureBundle, hasChromium, launchChromium, logInToPreview } from './lib/browser.ts'
import { freePort } from './lib/ports.ts'
import { postgresUnavailable, startPostgres } from './lib/postgres.ts'
import { initialJs } from './lib/bundle-size.ts'
import { benchOffloadedRead } from './lib/offloaded-read-bench.ts'
import { benchProposals } from './lib/proposal-bench.ts'
import { benchSealing } from './lib/seal-bench.ts'
import { benchAttack } from './lib/attack-bench.ts'
import { benchBadgePollers } from './lib/badge-poll-bench.ts'
import { benchFolderRecords } from './lib/folder-record-bench.ts'
import { percentile } from './lib/percentile.ts'
import { cpuSeconds } from './lib/proc.ts'
import { benchOnchainCloud } from './lib/foc-bench.ts'
import { benchIdleLog } from './lib/idle-log-bench.ts'
import { benchRetire } from './lib/retire-bench.ts'
import { formatUnits, parseUnits } from 'viem'
import { DEFAULT_CID_PROFILE } from '../server/shared/cid-profile.ts'

const HELP = `Usage: npm run bench -- [options]

  --duration <s>      seconds per throughput run (default 5)
  --rounds <n>        alternating direct/bridge rounds, and ingest uploads,
                      medians reported (default 3)
  --connections <n>   concurrent connections for throughput runs (default 32)
  --ingest-mib <n>    size of the ingest upload in MiB (default 256)
  --only <what>       metadata | ingest | ui | badges | storm | folder-records | attack
                      | service | deals | first-run | offloaded-read | foc | idle-log
                      | retire, or
                      several separated by commas (default: all)
  --folder-files <list> files below each folder of the folder-records section
                      (default 10,1000,100000)
  --slow-clients <n>  slow POST /login clients of the attack section (default
                      20000, fewer when this process may hold fewer descriptors)
  --storm-clients <n> concurrent PROPFIND Depth: 1 clients of the storm section
                      (default 200), over a folder of --storm-files files (1000)
  --deals <n>         deals loaded for the service section (default 1000000)
  --deal-files <list> file counts of the deals section's small-file runs
                      (default 1,100,10000)
  --deal-file-kib <n> size of each small file in KiB (default 16)
  --deal-large-mib <n> size of the deals section's one large file in MiB
                      (default 256; 0 skips it)
  --deal-proposals <n> proposals per way in the deals section's proposal figures
                      (default 300)
  --deal-speed <n>    SIMNET_SPEED of the deals section (default 10000: 5760
                      epochs between proposal and deal start are 17 s, time
                      enough to move a 64 MiB CAR on a busy machine)
  --read-group-mib <n> size of the offloaded group of the offloaded-read section
                      in MiB (default 256)
  --foc-files <n>     files of the foc section's times to committed and proved
                      (default 20, 64 KiB each)
  --foc-large-mib <n> size of the foc section's one large file in MiB (default
                      256; 0 skips it)
  --foc-speed <n>     SIMNET_SPEED of the foc section (default 600: a proving
                      period of 240 epochs is 12 s, its 20-epoch challenge
                      window 1 s; at 1200 the window is shorter than the
                      simulated chain takes to include a proof, which reverts)
  --retire-files <n>  files of the retire section (default 1000), half of them
                      deleted, as half of their 10 folders
  --retire-file-kib <n> size of each in KiB (default 64)
  --retire-group-mib <n> group size of the retire section in MiB (default 4)
  --idle-minutes <n>  minutes the idle-log section counts log lines with a Files
                      tab open, after its file is Offloaded (default 2)
  --read-file-mib <n> size of the file read out of it in MiB (default 1)
  --ui-runs <n>       tab openings measured on the preview page (default 7)
  --badge-files <n>   files in the folder the badges section lists (default 1000)
  --badge-ui-runs <n> page loads of the badges section in chromium (default 5; 0 skips)
  --badge-pollers <n> clients polling that folder's states while another user's
                      metadata is timed (default 50), for twice --duration s
  --first-run-mib <n> size of the first-run section's large file in MiB (default
                      200; 0 skips it)
  --cpu-prof <dir>    write V8 CPU profiles of the gateway and app processes
                      into <dir> (open them in Chrome DevTools)
  -h, --help          this text

Starts its own gateway and app surface on free loopback ports with a
temporary DATA_DIR, and removes it afterwards. The ui section builds js/
first when it is missing and needs /usr/bin/chromium (skipped without it).
The deals section runs \`npm start\` (--role all) once per run, each with a
fresh DATA_DIR, and reads the gateway process's CPU time and VmHWM from /proc
(Linux).
`

const { values: opts } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '32' },
    'ingest-mib': { type: 'string', default: '256' },
    only: { type: 'string' },
    'ui-runs': { type: 'string', default: '7' },
    'badge-files': { type: 'string', default: '1000' },
    'badge-pollers': { type: 'string', default: '50' },
    'badge-ui-runs': { type: 'string', default: '5' },
    'first-run-mib': { type: 'string', default: '200' },
    'idle-minutes': { type: 'string', default: '2' },
    'read-group-mib': { type: 'string', default: '256' },
    'read-file-mib': { type: 'string', default: '1' },
    'deal-proposals': { type: 'string', default: '300' },
    deals: { type: 'string', default: '1000000' },
    'deal-files': { type: 'string', default: '1,100,10000' },
    'deal-file-kib': { type: 'string', default: '16' },
    'deal-large-mib': { type: 'string', default: '256' },
    'deal-speed': { type: 'string', default: '10000' },
    'cpu-prof': { type: 'string' },
    'storm-clients': { type: 'string', default: '200' },
    'storm-files': { type: 'string', default: '1000' },
    'folder-files': { type: 'string', default: '10,1000,100000' },
    'slow-clients': { type: 'string', default: '20000' },
    'foc-files': { type: 'string', default: '20' },
    'foc-large-mib': { type: 'string', default: '256' },
    'foc-speed': { type: 'string', default: '600' },
    'retire-files': { type: 'string', default: '1000' },
    'retire-file-kib': { type: 'string', default: '64' },
    'retire-group-mib': { type: 'string', default: '4' },
    help: { type: 'boolean', short: 'h' },
  },
})
if (opts.help) {
  process.stdout.write(HELP)
  process.exit(0)
}

const duration = Number(opts.duration)
const rounds = Number(opts.rounds)
const connections = Number(opts.connections)
const ingestMiB = Number(opts['ingest-mib'])
const uiRuns = Number(opts['ui-runs'])
const SECTIONS = [
  'metadata',
  'ingest',
  'ui',
  'badges',
  'storm',
  'folder-records',
  'attack',
  'service',
  'deals',
  'first-run',
  'offloaded-read',
  'foc',
  'idle-log',
  'retire',
]
const only = opts.only?.split(',')
if (only?.some((section) => !SECTIONS.includes(section))) {
  process.stderr.write(`--only takes one or more of ${SECTIONS.join(', ')}, separated by commas\n`)
  process.exit(2)
}
const wants = (section: string) => only === undefined || only.includes(section)
const USER = 'admin'
const PASSWORD = 'bench-password-1'
const GATEWAY_USER = 'bridge'
const GATEWAY_PASSWORD = 'bench-gateway-secret'
/** A second user of the app surface, whose requests the badges section times while the first user's lists poll. */
const OTHER_USER = 'bench-other'
const OTHER_PASSWORD = 'bench-password-2'
const basic = (u: string, p: string) => 'Basic ' + Buffer.from(`${u}:${p}`).toString('base64')

interface Role {
  child: ChildProcess
  url: string
}

/**
 * Starts `server/main.ts --role <role>` on a free port and resolves once it answers.
 * Logs stay at `error` so that request logging is not what gets measured
 * (and load generators closing connections at the end are not reported).
 */
async function startRole(role: 'gateway' | 'app', env: Record<string, string>): Promise<Role> {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const profile = opts['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${opts['cpu-prof']}`] : []
  const child = spawn(process.execPath, [...profile, '--import', 'tsx', 'server/main.ts', '--role', role], {
    env: { ...process.env, LOG_LEVEL: 'error', ...env, [role === 'app' ? 'PORT' : 'GATEWAY_PORT']: String(port) },
    stdio: ['ignore', 'inherit', 'inherit'],
  })
  let exited = false
  child.once('exit', () => (exited = true))
  for (;;) {
    if (exited) throw new Error(`${role} exited before listening`)
    try {
      await fetch(url, { method: 'OPTIONS' })
      return { child, url }
    } catch {
      await new Promise((r) => setTimeout(r, 100))
    }
  }
}

/** Peak resident set size of a child process in MiB (Linux), from its VmHWM. */
function peakRssMiB(pid: number | undefined): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(status.match(/VmHWM:\s+(\d+)/)![1]) / 1024
}

function put(url: string, auth: string, body: Buffer): Promise<{ status: number; ms: number }> {
  const started = performance.now()
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'PUT', headers: { authorization: auth, 'content-length': body.length } }, (res) => {
      res.resume()
      res.on('end', () => resolve({ status: res.statusCode!, ms: performance.now() - started }))
    })
    req.on('error', reject)
    // 1 MiB writes with backpressure, as a real client streams a file.
    let offset = 0
    const pump = () => {
      while (offset < body.length) {
        const end = Math.min(offset + (1 << 20), body.length)
        const ok = req.write(body.subarray(offset, end))
        offset = end
        if (!ok) return void req.once('drain', pump)
      }
      req.end()
    }
    pump()
  })
}

async function fileInfo(gateway: string, filePath: string) {
  const res = await fetch(`${gateway}/file-info`, {
    method: 'POST',
    headers: { authorization: basic(GATEWAY_USER, GATEWAY_PASSWORD), 'content-type': 'application/json' },
    body: JSON.stringify({ filePath, verbose: true }),
  })
  return (await res.json()) as { success: boolean; result?: { file: { details: { groups: { state: string }[] } } } }
}

interface Throughput {
  rps: number
  p50: number
  p99: number
  /** CPU time per request of each watched process, in µs: steadier than req/s on a shared 2-core box. */
  cpuMicros: number[]
  /** CPU time per request of the load generator (this process), in µs: it shares the same 2 cores. */
  loadMicros: number
}

async function load(
  title: string,
  url: string,
  headers: Record<string, string>,
  body: string,
  watched: (number | undefined)[],
  seconds = duration,
): Promise<Throughput> {
  const before = watched.map(cpuSeconds)
  const ownBefore = process.cpuUsage()
  const result = await autocannon({ url, method: 'POST', headers, body, connections, duration: seconds })
  if (result.non2xx || result.errors) throw new Error(`${title}: ${result.non2xx} non-2xx, ${result.errors} errors`)
  const own = process.cpuUsage(ownBefore)
  const cpuMicros = watched.map((pid, i) => ((cpuSeconds(pid) - before[i]) * 1e6) / result.requests.total)
  const loadMicros = (own.user + own.system) / result.requests.total
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, cpuMicros, loadMicros }
}

/** The sections that need a running gateway and app surface. */
async function benchStack() {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-'))
  const common = { GATEWAY_USER, GATEWAY_PASSWORD, HOST: '127.0.0.1' }
  const gateway = await startRole('gateway', {
    ...common,
    DATA_DIR: dataDir,
    GROUP_IDLE_SECONDS: '1',
  })
  // ADMIN_PASSWORD makes the admin only in an empty user store: with a second user, both are added here.
  const users = wants('badges')
    ? [
        [USER, PASSWORD, '--admin'],
        [OTHER_USER, OTHER_PASSWORD],
      ]
    : []
  for (const [user, password, ...flags] of users) {
    const added = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/users.ts', 'add', user, '--password', password, ...flags], {
      env: { ...process.env, DATA_DIR: dataDir },
      stdio: ['ignore', 'ignore', 'inherit'],
    })
    if (added.status !== 0) throw new Error(`adding ${user} exited with ${added.status}`)
  }
  const app = await startRole('app', {
    ...common,
    DATA_DIR: dataDir,
    GATEWAY_URL: gateway.url,
    ADMIN_PASSWORD: PASSWORD,
  })
  const userAuth = basic(USER, PASSWORD)
  console.log(
    `gateway ${gateway.url} (pid ${gateway.child.pid}), app ${app.url} (pid ${app.child.pid}); ${connections} connections, ${duration} s per run\n`,
  )

  try {
    if (wants('metadata')) await benchMetadata(gateway, app, userAuth)
    if (wants('ingest')) await benchIngest(gateway)
    if (wants('ui')) await benchUi(app.url, userAuth)
    if (wants('badges')) await benchBadges(app.url, userAuth)
    if (wants('storm')) await benchStorm(app.url, userAuth)
    if (wants('folder-records')) {
      const sizes = opts['folder-files']!.split(',').map(Number)
      await benchFolderRecords({
        gatewayUrl: gateway.url,
        gatewayPid: gateway.child.pid,
        auth: basic(GATEWAY_USER, GATEWAY_PASSWORD),
        sizes,
      })
    }
    // Last: it leaves the app's throttle and connection counts busy for a while.
    if (wants('attack')) await benchAttack({ appUrl: app.url, appPid: app.child.pid, slowClients: Number(opts['slow-clients']) })
  } finally {
    app.child.kill('SIGTERM')
    gateway.child.kill('SIGTERM')
    await Promise.all([app, gateway].map((r) => new Promise((res) => r.child.once('exit', res))))
    rmSync(dataDir, { recursive: true, force: true })
  }
}

/** Metadata section: get-file-metadata through the bridge (the app surface) against /file-info on the gateway directly. */
async function benchMetadata(gateway: Role, app: Role, userAuth: string) {
  const filesUrl = `${app.url}/remote.php/dav/files/${USER}`
  const sample = randomFillSync(Buffer.alloc(3 * 256 * 1024 + 1000))
  const uploaded = await put(`${filesUrl}/bench-metadata.bin`, userAuth, sample)
  if (uploaded.status >= 300) throw new Error(`upload answered ${uploaded.status}`)

  const direct = (seconds?: number) =>
    load(
      'direct',
      `${gateway.url}/file-info`,
      { authorization: basic(GATEWAY_USER, GATEWAY_PASSWORD), 'content-type': 'application/json' },
      JSON.stringify({ filePath: `/${USER}/bench-metadata.bin`, verbose: true }),
      [gateway.child.pid],
      seconds,
    )
  const bridged = (seconds?: number) =>
    load(
      'bridge',
      `${app.url}/ocs/v2.php/apps/gateway/get-file-metadata`,
      { authorization: userAuth, 'content-type': 'application/json', 'ocs-apirequest': 'true' },
      JSON.stringify({ filePath: '/bench-metadata.bin' }),
      [gateway.child.pid, app.child.pid],
      seconds,
    )
  // One unreported round each first: the JIT warms up both processes and the load generator.
  await direct(2)
  await bridged(2)
  // Alternate the two loads in rounds so that background noise hits both alike; report medians.
  const directRuns: Throughput[] = []
  const bridgedRuns: Throughput[] = []
  for (let round = 0; round < rounds; round++) {
    directRuns.push(await direct())
    bridgedRuns.push(await bridged())
  }
  const summary = (runs: Throughput[]) =>
    `${median(runs.map((r) => r.rps)).toFixed(0)} req/s, p50 ${median(runs.map((r) => r.p50))} ms, p99 ${median(runs.map((r) => r.p99))} ms`
  const ratios = directRuns.map((d, i) => bridgedRuns[i].rps / d.rps)
  console.log(`get-file-metadata (bridge) vs /file-info (gateway direct), median of ${rounds} alternating rounds`)
  console.log(`  gateway direct : ${summary(directRuns)}`)
  console.log(`  through bridge : ${summary(bridgedRuns)}`)
  const cpu = (runs: Throughput[], i: number) => median(runs.map((r) => r.cpuMicros[i])).toFixed(0)
  const loadCpu = (runs: Throughput[]) => median(runs.map((r) => r.loadMicros)).toFixed(0)
  console.log(
    `  CPU per request: gateway ${cpu(directRuns, 0)} µs direct; gateway ${cpu(bridgedRuns, 0)} µs + bridge ${cpu(bridgedRuns, 1)} µs through the bridge`,
  )
  console.log(`  load generator  : ${loadCpu(directRuns)} µs direct, ${loadCpu(bridgedRuns)} µs through the bridge (same 2 cores)`)
  console.log(
    `  ratio bridge/direct throughput: ${median(ratios).toFixed(2)} (rounds: ${ratios.map((r) => r.toFixed(2)).join(', ')}; target >= 0.70)\n`,
  )
}

/**
 * Ingest section: a large WebDAV upload to the gateway, to its CID and then its CAR and piece CID,
 * against node's SHA-256 of the same bytes; then sealing on its own (seal-bench.ts).
 */
async function benchIngest(gateway: Role) {
  const bytes = Buffer.alloc(ingestMiB * 1024 * 1024)
  const mb = bytes.length / 1e6
  // The user's folder exists once the files area was used; with --only ingest it may not.
  await fetch(`${gateway.url}/${USER}`, { method: 'MKCOL', headers: { authorization: basic(GATEWAY_USER, GATEWAY_PASSWORD) } })
  // One upload varies by a third from run to run on this machine: medians of `rounds`, each of new bytes (same bytes would dedupe).
  const runs: { sha: number; put: number; total: number; cpu: number }[] = []
  for (let round = 0; round < rounds; round++) {
    randomFillSync(bytes)
    const hashStart = performance.now()
    const hash = createHash('sha256')
    for (let o = 0; o < bytes.length; o += 1 << 20) hash.update(bytes.subarray(o, o + (1 << 20)))
    hash.digest()
    const sha = (performance.now() - hashStart) / 1000

    const path = `/${USER}/bench-ingest-${round}.bin`
    const cpuBefore = cpuSeconds(gateway.child.pid)
    const started = performance.now()
    const uploaded = await put(`${gateway.url}${encodeURI(path)}`, basic(GATEWAY_USER, GATEWAY_PASSWORD), bytes)
    if (uploaded.status >= 300) throw new Error(`ingest upload answered ${uploaded.status}`)
    const cpu = cpuSeconds(gateway.child.pid) - cpuBefore
    // Done when every group holding the file has its CAR and piece CID.
    for (;;) {
      const info = await fileInfo(gateway.url, path)
      const groups = info.result?.file.details.groups ?? []
      if (groups.length && groups.every((g) => g.state === 'ready_for_deals')) break
      await new Promise((r) => setTimeout(r, 100))
    }
    runs.push({ sha, put: uploaded.ms / 1000, total: (performance.now() - started) / 1000, cpu })
  }
  const at = (f: (r: (typeof runs)[number]) => number) => median(runs.map(f))
  const each = (f: (r: (typeof runs)[number]) => number) => runs.map((r) => (mb / f(r)).toFixed(0)).join(', ')
  const cidProfile = process.env.CID_PROFILE ?? DEFAULT_CID_PROFILE

  console.log(`ingest of ${ingestMiB} MiB through WebDAV (gateway, ${cidProfile}, GROUP_IDLE_SECONDS=1), median of ${rounds} uploads`)
  console.log(`  node sha-256             : ${(mb / at((r) => r.sha)).toFixed(0)} MB/s`)
  console.log(
    `  PUT → CID (durable)      : ${(mb / at((r) => r.put)).toFixed(0)} MB/s (${at((r) => r.put).toFixed(2)} s; runs ${each((r) => r.put)} MB/s)`,
  )
  console.log(
    `  gateway CPU for the PUT  : ${((at((r) => r.cpu) * 1000) / ingestMiB).toFixed(2)} ms per MiB (user + system, with the sealing of groups that filled meanwhile)`,
  )
  console.log(
    `  PUT → CAR + piece CID    : ${(mb / at((r) => r.total)).toFixed(0)} MB/s (${at((r) => r.total).toFixed(2)} s, includes up to 1 s idle wait for the last group)`,
  )
  console.log(`  ratio to sha-256 (CID)   : ${(at((r) => r.sha) / at((r) => r.put)).toFixed(2)}`)
  console.log(`  ratio to sha-256 (piece) : ${(at((r) => r.sha) / at((r) => r.total)).toFixed(2)}`)
  console.log(`  gateway peak RSS         : ${peakRssMiB(gateway.child.pid).toFixed(0)} MiB`)
  await benchSealing(ingestMiB)
}

/**
 * Its own process, so that its peak RSS is the deal service's alone; on its
 * SQLite file, then on a throw-away PostgreSQL where Debian's postgresql is installed.
 */
async function benchService() {
  const run = async (args: string[] = []) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/bench-service.ts', '--deals', String(opts.deals), ...args], {
      stdio: 'inherit',
    })
    const [code] = await once(child, 'exit')
    if (code !== 0) throw new Error(`service benchmark exited with ${code}`)
  }
  console.log('\ndeal service: paging get-on-chain-deals (SQLite)')
  await run()
  if (postgresUnavailable) {
    console.log(`\ndeal service on PostgreSQL: skipped (${postgresUnavailable})`)
    return
  }
  console.log('\ndeal service: paging get-on-chain-deals (PostgreSQL)')
  const pg = await startPostgres()
  try {
    await run(['--database-url', pg.createDatabase('bench_service')])
  } finally {
    pg.stop()
  }
}

async function main() {
  if (['metadata', 'ingest', 'ui', 'badges', 'storm', 'folder-records', 'attack'].some(wants)) await benchStack()
  if (wants('service')) await benchService()
  if (wants('deals')) await benchDeals()
  if (wants('first-run')) await benchFirstRun()
  if (wants('offloaded-read')) await benchReadOffloaded()
  if (wants('foc'))
    await benchOnchainCloud({
      files: Number(opts['foc-files']),
      fileKib: 64,
      largeMib: Number(opts['foc-large-mib']),
      speed: Number(opts['foc-speed']),
    })
  if (wants('idle-log')) await benchIdleLog(Number(opts['idle-minutes']))
  if (wants('retire')) await benchRetiring()
}

/** Retire section: what deleting half of the files saves a month on the PDP route, once their groups are retired. */
async function benchRetiring() {
  const files = Number(opts['retire-files'])
  const fileKib = Number(opts['retire-file-kib'])
  const groupMib = Number(opts['retire-group-mib'])
  const r = await benchRetire({ files, fileKib, folders: 10, groupMib })
  const usdfc = (a: bigint) => formatUnits(a, 18).padStart(22)
  const fees = BigInt(r.dataSets) * parseUnits(r.datasetFeePerMonth, 18)
  const pct = (a: bigint, b: bigint) => (b === 0n ? '-' : `${((Number(a) / Number(b)) * 100).toFixed(1)} %`)
  console.log(
    `\nretire: USDFC a month for ${files} files × ${fileKib} KiB after deleting half of them (5 of 10 folders), 2 PDP copies each, groups of ${groupMib} MiB, on the simulated Onchain Cloud (${r.seconds.toFixed(0)} s)`,
  )
  console.log(
    `  ${r.groups} groups, ${r.retiredGroups} retired; ${(r.deadInLiveGroups / 2 ** 20).toFixed(1)} MiB of deleted files left inside live groups (compaction's share)`,
  )
  console.log('                                          USDFC a month   of which size (the rest: the data set fee)')
  console.log(`  before (every copy kept)       ${usdfc(r.keptPerMonth)}   ${usdfc(r.keptPerMonth - fees)}`)
  console.log(`  after retirement               ${usdfc(r.retiredPerMonth)}   ${usdfc(r.retiredPerMonth - fees)}`)
  console.log(
    `  saved: ${formatUnits(r.keptPerMonth - r.retiredPerMonth, 18)} USDFC a month (${pct(r.keptPerMonth - r.retiredPerMonth, r.keptPerMonth)} of the bill, ${pct(r.keptPerMonth - r.retiredPerMonth, r.keptPerMonth - fees)} of its size part); npm run deals -- usage had said ${r.reportedAfter} after retirement`,
  )
  console.log(
    `  Both are the account's rate on the simulated chain. Each of the ${r.dataSets} data sets pays ${r.datasetFeePerMonth} USDFC a month while it holds a piece, whatever its size: at this size that fee is most of the bill.`,
  )
}

/** Offloaded-read section: what a reader of one file waits for once its group has left the disk. */
async function benchReadOffloaded() {
  const groupMiB = Number(opts['read-group-mib'])
  const fileMiB = Number(opts['read-file-mib'])
  console.log(
    `\noffloaded read: one ${fileMiB} MiB file out of an offloaded ${groupMiB} MiB group (deal test stack, 2 simulated providers on loopback)`,
  )
  const runs = await benchOffloadedRead(groupMiB, fileMiB)
  console.log(`  the file's group holds ${(runs[0].groupSize / 2 ** 20).toFixed(1)} MiB of blocks`)
  console.log('  path                          first byte ms     MB/s   fetched from providers')
  for (const r of runs) {
    console.log(
      `  ${r.label.padEnd(28)} ${r.firstByteMs.toFixed(0).padStart(14)} ${r.mbPerSecond.toFixed(1).padStart(8)}   ${(r.fetchedBytes / 2 ** 20).toFixed(1)} MiB in ${r.requests} request(s)`,
    )
  }
}

/**
 * Storm section: while `--storm-clients` clients list a folder of
 * `--storm-files` files through the app surface without pause, one probe at a
 * time asks status.php and the metadata route; their p99 is what a user of
 * the rest of the stack feels during someone else's big listing.
 */
async function benchStorm(appUrl: string, auth: string) {
  const clients = Number(opts['storm-clients'])
  const files = Number(opts['storm-files'])
  const folder = `${appUrl}/remote.php/dav/files/${USER}/storm`
  await fetch(folder, { method: 'MKCOL', headers: { authorization: auth } })
  for (let i = 0; i < files; i += 16) {
    await Promise.all(
      Array.from({ length: Math.min(16, files - i) }, (_, k) =>
        fetch(`${folder}/file-${i + k}.txt`, { method: 'PUT', headers: { authorization: auth }, body: `storm file ${i + k}\n` }).then((r) =>
          r.arrayBuffer(),
        ),
      ),
    )
  }
  const probes = {
    'status.php': () => fetch(`${appUrl}/status.php`),
    'metadata route': () =>
      fetch(`${appUrl}/ocs/v2.php/apps/gateway/get-file-metadata`, {
        method: 'POST',
        headers: { authorization: auth, 'content-type': 'application/json', 'ocs-apirequest': 'true' },
        body: JSON.stringify({ filePath: '/storm/file-1.txt' }),
      }),
  }
  const probeFor = async (ms: number) => {
    const times: Record<string, number[]> = Object.fromEntries(Object.keys(probes).map((k) => [k, []]))
    const until = performance.now() + ms
    while (performance.now() < until) {
      for (const [name, probe] of Object.entries(probes)) {
        const started = performance.now()
        const res = await probe()
        await res.arrayBuffer()
        if (!res.ok) throw new Error(`${name} answered ${res.status} during the storm`)
        times[name].push(performance.now() - started)
      }
      await new Promise((r) => setTimeout(r, 20))
    }
    return times
  }
  const quiet = await probeFor(3_000)
  let storming = true
  let listings = 0
  const listing = async () => {
    while (storming) {
      const res = await fetch(`${folder}/`, { method: 'PROPFIND', headers: { authorization: auth, depth: '1' } })
      await res.arrayBuffer()
      if (res.status !== 207) throw new Error(`PROPFIND answered ${res.status}`)
      listings++
    }
  }
  const stormStart = performance.now()
  const storm = Array.from({ length: clients }, listing)
  const stormy = await probeFor(duration * 2_000)
  storming = false
  await Promise.all(storm)
  const seconds = (performance.now() - stormStart) / 1000
  console.log(
    `\nstorm: ${clients} clients listing ${files} files (PROPFIND Depth: 1) through the app surface, ${(listings / seconds).toFixed(1)} listings/s`,
  )
  for (const name of Object.keys(probes)) {
    console.log(
      `  ${name.padEnd(15)}: quiet p50 ${percentile(quiet[name], 0.5).toFixed(1)} ms, p99 ${percentile(quiet[name], 0.99).toFixed(1)} ms; ` +
        `during the storm p50 ${percentile(stormy[name], 0.5).toFixed(1)} ms, p99 ${percentile(stormy[name], 0.99).toFixed(1)} ms (${stormy[name].length} probes; target p99 < 200 ms)`,
    )
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/** The tab's budgets: the script every Files page runs (≤ 15 KB gzipped, the entry and what it imports statically) and opening the tab to the record shown. */
async function benchUi(appUrl: string, auth: string) {
  ensureBundle()
  const jsDir = join(import.meta.dirname, '..', 'js')
  const initial = initialJs(jsDir, 'gateway-init.mjs')
  const view = readdirSync(jsDir).filter((f) => /^GatewayTab-.*\.mjs$/.test(f))
  const viewGzip = view.reduce((sum, f) => sum + gzipSync(readFileSync(join(jsDir, f)), { level: 9 }).length, 0)
  console.log('\nsidebar tab (preview page, the built bundle)')
  console.log(
    `  initial JS, gzipped       : ${(initial.gzipBytes / 1024).toFixed(1)} KB in ${initial.files.length} file(s) (budget 15 KB: every Files page loads it, tab opened or not)`,
  )
  console.log(`  lazy view chunk, gzipped  : ${(viewGzip / 1024).toFixed(1)} KB`)
  if (!hasChromium()) {
    console.log('  open tab → record shown  : skipped (/usr/bin/chromium is missing)')
    return
  }
  const put = await fetch(`${appUrl}/remote.php/dav/files/${USER}/bench-tab.txt`, {
    method: 'PUT',
    headers: { authorization: auth },
    body: 'x'.repeat(8192),
  })
  if (put.status >= 300) throw new Error(`upload answered ${put.status}`)
  const browser = await launchChromium()
  try {
    const page = await browser.newPage()
    await logInToPreview(page, appUrl, USER, PASSWORD)
    // Timed inside the page: from the click on the file to the record in the DOM.
    // A string, not a function: tsx would wrap a function's helpers in names the page does not have.
    const openTab = () =>
      page.evaluate<number>(`new Promise((resolve) => {
      const row = document.querySelector('[data-test="file-row"][data-path="/bench-tab.txt"] button.preview-files__name')
      const started = performance.now()
      const observer = new MutationObserver(() => {
        if (!document.querySelector('#app-sidebar [data-test="record"]')) return
        observer.disconnect()
        resolve(performance.now() - started)
      })
      observer.observe(document.body, { childList: true, subtree: true })
      row.click()
    })`)
    const cold: number[] = []
    const warm: number[] = []
    for (let i = 0; i < uiRuns; i++) {
      // Cold: a fresh page, so the view chunk and the config are fetched again.
      await page.reload()
      await page.locator('[data-test="file-row"][data-path="/bench-tab.txt"]').waitFor()
      cold.push(await openTab())
      // Warm: the sidebar closed and opened again on the same page.
      await page.getByRole('button', { name: 'Close sidebar' }).click()
      warm.push(await openTab())
    }
    console.log(
      `  open tab → record (cold) : median ${median(cold).toFixed(0)} ms over ${uiRuns} page loads (min ${Math.min(...cold).toFixed(0)}, max ${Math.max(...cold).toFixed(0)})`,
    )
    console.log(`  open tab → record (warm) : median ${median(warm).toFixed(0)} ms (sidebar reopened on the same page)`)
  } finally {
    await browser.close()
  }
}

/**
 * The Files list's badges on a folder of `--badge-files` files: what one
 * get-folder-states request costs (bytes, ms) beside asking each file's
 * record, and in chromium, from opening the folder to every badge shown.
 */
async function benchBadges(appUrl: string, auth: string) {
  const files = Number(opts['badge-files'])
  const folder = `/bench-badges-${files}`
  const dav = (path: string, method: string, body?: string) =>
    fetch(`${appUrl}/remote.php/dav/files/${USER}${path}`, { method, headers: { authorization: auth }, body })
  if ((await dav(folder, 'MKCOL')).status !== 201) throw new Error(`MKCOL ${folder} failed`)
  for (let i = 0; i < files; i += 16) {
    await Promise.all(
      Array.from({ length: Math.min(16, files - i) }, (_, j) =>
        dav(`${folder}/file-${String(i + j).padStart(5, '0')}.txt`, 'PUT', `badge bench file ${i + j}\n`),
      ),
    )
  }
  const ocs = async (route: string, body: unknown) => {
    const started = performance.now()
    const res = await fetch(`${appUrl}/ocs/v2.php/apps/gateway/${route}`, {
      method: 'POST',
      headers: { authorization: auth, 'ocs-apirequest': 'true', 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    const bytes = (await res.arrayBuffer()).byteLength
    if (res.status !== 200) throw new Error(`${route} answered ${res.status}`)
    return { ms: performance.now() - started, bytes }
  }
  // First a changed folder (nothing kept), then kept answers, as each listing of an unchanged folder gets.
  await dav(`${folder}/touched.txt`, 'PUT', 'changed')
  const first = await ocs('get-folder-states', { folderPath: folder })
  const again: number[] = []
  for (let i = 0; i < 7; i++) again.push((await ocs('get-folder-states', { folderPath: folder })).ms)
  let perFileMs = 0
  let perFileBytes = 0
  const sample = Math.min(files, 100)
  for (let i = 0; i < sample; i++) {
    const one = await ocs('get-file-metadata', { filePath: `${folder}/file-${String(i).padStart(5, '0')}.txt` })
    perFileMs += one.ms
    perFileBytes += one.bytes
  }
  const perFileTotalMs = (perFileMs / sample) * (files + 1)
  const perFileTotalBytes = (perFileBytes / sample) * (files + 1)
  console.log(`\nFiles list badges on a folder of ${files + 1} files`)
  console.log(
    `  get-folder-states        : 1 request, ${(first.bytes / 1024).toFixed(1)} KB, ${first.ms.toFixed(0)} ms after a change, median ${median(again).toFixed(0)} ms unchanged`,
  )
  console.log(
    `  one record per file      : ${files + 1} requests, ${(perFileTotalBytes / 1024).toFixed(0)} KB, ${perFileTotalMs.toFixed(0)} ms one after another (from ${sample} measured)`,
  )
  console.log(
    `  ratio per-file/batch     : ${(perFileTotalMs / first.ms).toFixed(0)}× the time, ${(perFileTotalBytes / first.bytes).toFixed(1)}× the bytes`,
  )
  const otherAuth = basic(OTHER_USER, OTHER_PASSWORD)
  const otherFile = await fetch(`${appUrl}/remote.php/dav/files/${OTHER_USER}/other.txt`, {
    method: 'PUT',
    headers: { authorization: otherAuth },
    body: 'a file of another user\n',
  })
  if (otherFile.status >= 300) throw new Error(`the other user's upload answered ${otherFile.status}`)
  await benchBadgePollers({
    appUrl,
    auth,
    folder,
    screen: Array.from({ length: Math.min(files, 40) }, (_, i) => `file-${String(i).padStart(5, '0')}.txt`),
    other: { auth: otherAuth, filePath: '/other.txt' },
    pollers: Number(opts['badge-pollers']),
    seconds: duration * 2,
  })
  const pageLoads = Number(opts['badge-ui-runs'])
  if (!hasChromium() || pageLoads === 0) {
    console.log(`  listing → every badge    : skipped (${pageLoads === 0 ? '--badge-ui-runs 0' : '/usr/bin/chromium is missing'})`)
    return
  }
  ensureBundle()
  const browser = await launchChromium()
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    await logInToPreview(page, appUrl, USER, PASSWORD)
    const runs: { rows: number; badges: number; requests: number }[] = []
    for (let i = 0; i < pageLoads; i++) {
      let requests = 0
      const count = (res: import('playwright-core').Response) => {
        if (res.url().includes('/get-folder-states') && res.request().postData()?.includes(folder)) requests++
      }
      page.on('response', count)
      const started = Date.now()
      await page.goto(`${appUrl}/?dir=${encodeURIComponent(folder)}`)
      await page.waitForFunction((n) => document.querySelectorAll('[data-test="file-row"]').length === n, files + 1, { timeout: 120_000 })
      const rows = Date.now() - started
      await page.waitForFunction((n) => document.querySelectorAll('[data-gateway-badge]').length === n, files + 1, { timeout: 120_000 })
      runs.push({ rows, badges: Date.now() - started, requests })
      page.off('response', count)
    }
    const at = (f: (r: (typeof runs)[number]) => number) => median(runs.map(f))
    console.log(
      `  listing → every row      : median ${at((r) => r.rows).toFixed(0)} ms over ${runs.length} page loads (the preview page's own PROPFIND and rows)`,
    )
    console.log(
      `  listing → every badge    : median ${at((r) => r.badges).toFixed(0)} ms (${(at((r) => r.badges) - at((r) => r.rows)).toFixed(0)} ms after the rows), ${Math.max(...runs.map((r) => r.requests))} get-folder-states request per listing`,
    )
  } finally {
    await browser.close()
  }
}

/** The deals section's settings: quick ticks and checks, two copies, at `--deal-speed`. */
const dealEnv = () => ({
  SIMNET_SPEED: opts['deal-speed']!,
  DEAL_COPIES: '2',
  DEAL_TICK_SECONDS: '0.2',
  RETRIEVAL_CHECK_SECONDS: '1',
  GROUP_IDLE_SECONDS: '1',
  // The run ends when every group is offloaded: folder listings stored after the files' group closed wait a day
  // for more data by default, alone in a group; here a second, as the files' group does.
  LISTING_WAIT_SECONDS: '1',
})

/** `npm start` (--role all) on free ports, with `env` on top of its defaults; resolves once the gateway answers. */
async function startAllInOne(dataDir: string, env: Record<string, string>): Promise<Role> {
  const [appPort, gatewayPort, servicePort] = [await freePort(), await freePort(), await freePort()]
  const url = `http://127.0.0.1:${gatewayPort}`
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts', '--role', 'all'], {
    env: {
      ...process.env,
      LOG_LEVEL: 'warn',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      PORT: String(appPort),
      GATEWAY_PORT: String(gatewayPort),
      SERVICE_PORT: String(servicePort),
      SIMNET_RPC_PORT: '0',
      SIMFOC_RPC_PORT: '0',
      SIMFOC_PROVIDERS: '0',
      GATEWAY_USER,
      GATEWAY_PASSWORD,
      ADMIN_PASSWORD: PASSWORD,
      TICKER_ENABLED: 'false',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  let exited = false
  child.once('exit', () => (exited = true))
  for (;;) {
    if (exited) throw new Error('npm start exited before listening')
    try {
      await fetch(url, { method: 'OPTIONS', headers: { authorization: basic(GATEWAY_USER, GATEWAY_PASSWORD) } })
      return { child, url }
    } catch {
      await new Promise((r) => setTimeout(r, 100))
    }
  }
}

/** Stops an `npm start` run and removes its data dir. */
async function stopAllInOne(run: Role, dataDir: string): Promise<void> {
  // Waiting for an exit that already happened would leave nothing for node to do: it would quit silently.
  if (run.child.exitCode === null && run.child.signalCode === null) {
    const exited = once(run.child, 'exit')
    run.child.kill('SIGTERM')
    await exited
  }
  rmSync(dataDir, { recursive: true, force: true })
}

/** The pid of the child of `parent` started with `--role <role>` (Linux /proc). */
function childWithRole(parent: number, role: string): number {
  const children = readFileSync(`/proc/${parent}/task/${parent}/children`, 'utf8').trim().split(/\s+/).map(Number)
  const found = children.find((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').includes(`--role ${role}`))
  if (!found) throw new Error(`npm start has no --role ${role} process`)
  return found
}

interface DealRun {
  label: string
  files: number
  bytes: number
  seconds: number
  cpu: number
  idleRssMiB: number
  peakRssMiB: number
}

/** Uploads `files` files of `size` bytes (16 at a time) and waits until the folder is offloaded. */
async function dealRun(label: string, files: number, size: number): Promise<DealRun> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-deals-'))
  const run = await startAllInOne(dataDir, dealEnv())
  const auth = basic(GATEWAY_USER, GATEWAY_PASSWORD)
  try {
    // npm start supervises one process per part: what onboarding costs is the gateway's.
    const pid = childWithRole(run.child.pid!, 'gateway')
    const idleRssMiB = Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)![1]) / 1024
    const cpuBefore = cpuSeconds(pid)
    const started = performance.now()
    const folder = await fetch(`${run.url}/bench`, { method: 'MKCOL', headers: { authorization: auth } })
    if (folder.status !== 201) throw new Error(`MKCOL answered ${folder.status}`)
    let next = 0
    const uploader = async () => {
      while (next < files) {
        const i = next++
        const uploaded = await put(`${run.url}/bench/f${i}.bin`, auth, randomFillSync(Buffer.alloc(size)))
        if (uploaded.status >= 300) throw new Error(`upload ${i} answered ${uploaded.status}`)
      }
    }
    await Promise.all(Array.from({ length: Math.min(16, files) }, uploader))
    // The folder's own directory nodes are stored in the background about a second after the last change; a record only reads.
    const ask = () =>
      fetch(`${run.url}/file-info`, {
        method: 'POST',
        headers: { authorization: auth, 'content-type': 'application/json' },
        body: JSON.stringify({ filePath: '/bench', verbose: true }),
      })
    await (await ask()).arrayBuffer()
    // Onboarded: every group is offloaded. Read from the gateway's SQLite file (read-only, from this
    // process) so that polling costs the measured process nothing; /file-info confirms it afterwards.
    const db = new DatabaseSync(join(dataDir, 'gateway', 'gateway.sqlite'), { readOnly: true })
    const count = (text: string) => Number(Object.values(db.prepare(text).get() ?? {})[0])
    try {
      while (
        count('SELECT COUNT(*) FROM contents') < files ||
        count(`SELECT COUNT(*) FROM content_groups WHERE state != 'offloaded'`) !== 0
      ) {
        if (run.child.exitCode !== null) throw new Error('npm start exited during the run')
        await new Promise((r) => setTimeout(r, 200))
      }
    } finally {
      db.close()
    }
    const cpu = cpuSeconds(pid) - cpuBefore
    const seconds = (performance.now() - started) / 1000
    const peak = peakRssMiB(pid)
    const res = await ask()
    const state = ((await res.json()) as { result?: { file: { details?: { state: string } } } }).result?.file.details?.state
    if (state !== 'offloaded') throw new Error(`/file-info says ${state}, not offloaded`)
    return { label, files, bytes: files * size, seconds, cpu, idleRssMiB, peakRssMiB: peak }
  } finally {
    await stopAllInOne(run, dataDir)
  }
}

/** Deals section: what onboarding costs the gateway per GiB, and how it grows with the number of files. */
async function benchDeals() {
  const counts = opts['deal-files']
    .split(',')
    .map(Number)
    .filter((n) => Number.isInteger(n) && n > 0)
  const smallBytes = Number(opts['deal-file-kib']) * 1024
  const largeBytes = Number(opts['deal-large-mib']) * 1024 * 1024
  const proposals = await benchProposals(Number(opts['deal-proposals']))
  console.log(`\ndeals: proposals to a simulated provider (${opts['deal-proposals']} each; client and provider in this process)`)
  console.log('  how                            proposals/s   CPU ms/proposal')
  for (const p of proposals)
    console.log(`  ${p.label.padEnd(30)} ${p.perSecond.toFixed(0).padStart(11)}   ${p.cpuMsPerProposal.toFixed(2).padStart(15)}`)
  console.log(
    `  over the wire, one at a time: ${(proposals[1].cpuMsPerProposal / proposals[0].cpuMsPerProposal).toFixed(1)}× the CPU of the in-process call`,
  )
  console.log(`\ndeals: upload → offloaded (npm start, SIMNET_SPEED=${opts['deal-speed']}, DEAL_COPIES=2, GROUP_SIZE 64 MiB)`)
  console.log('  The gateway process alone is measured (the simulated providers, which fetch, hash and store')
  console.log('  every CAR, run beside the deal service). CPU is counted from the first PUT; peak RSS is VmHWM.')
  const runs: DealRun[] = []
  for (const n of counts) runs.push(await dealRun(`${n} × ${opts['deal-file-kib']} KiB`, n, smallBytes))
  if (largeBytes > 0) runs.push(await dealRun(`1 × ${opts['deal-large-mib']} MiB`, 1, largeBytes))
  console.log('  run                    data   wall s    CPU s   CPU s/GiB   CPU ms/file   RSS idle → peak')
  for (const r of runs) {
    const gib = r.bytes / 2 ** 30
    console.log(
      `  ${r.label.padEnd(16)} ${(r.bytes / 2 ** 20).toFixed(1).padStart(8)} MiB ${r.seconds.toFixed(1).padStart(7)} ${r.cpu.toFixed(2).padStart(8)} ` +
        `${(r.cpu / gib).toFixed(1).padStart(11)} ${((r.cpu * 1000) / r.files).toFixed(1).padStart(13)}   ${r.idleRssMiB.toFixed(0)} → ${r.peakRssMiB.toFixed(0)} MiB`,
    )
  }
}

/**
 * First-run section: what a newcomer waits for. `npm start` with its own
 * defaults (1 minute ≈ 5 hours, three deal-market copies and two PDP copies
 * on its simulated Onchain Cloud, 20 s group idle, 5 s ticks), one file
 * uploaded through the app surface, and the wall time until the metadata
 * route shows its first proved PDP copy and says `Offloaded` (the targets:
 * 3 and 5 minutes).
 */
async function benchFirstRun() {
  const largeMiB = Number(opts['first-run-mib'])
  console.log('\nfirst run: upload → Offloaded on npm start defaults (target under 300 s)')
  const cases: [string, Buffer][] = [['15 B (hello.txt)', Buffer.from('hello filecoin\n')]]
  if (largeMiB > 0) cases.push([`${largeMiB} MiB`, randomFillSync(Buffer.alloc(largeMiB * 2 ** 20))])
  for (const [label, body] of cases) {
    const dataDir = mkdtempSync(join(tmpdir(), 'bench-first-run-'))
    const appPort = await freePort()
    // npm start's own simulated Onchain Cloud (SIMFOC_PROVIDERS defaults to 3): PDP copies count towards Offloaded.
    const run = await startAllInOne(dataDir, { PORT: String(appPort), SIMFOC_PROVIDERS: '3' })
    const app = `http://127.0.0.1:${appPort}`
    const auth = basic(USER, PASSWORD)
    try {
      // The app surface starts last: wait for it too.
      while ((await fetch(`${app}/status.php`).catch(() => undefined))?.status !== 200) await new Promise((r) => setTimeout(r, 100))
      const started = performance.now()
      const uploaded = await put(`${app}/remote.php/dav/files/${USER}/first.bin`, auth, body)
      if (uploaded.status !== 201) throw new Error(`upload answered ${uploaded.status}`)
      const seen: string[] = []
      let last = ''
      let firstProof: number | undefined
      for (;;) {
        if (run.child.exitCode !== null) throw new Error('npm start exited during the run')
        const res = await fetch(`${app}/ocs/v2.php/apps/gateway/get-file-metadata`, {
          method: 'POST',
          headers: { authorization: auth, 'OCS-APIRequest': 'true', 'content-type': 'application/json' },
          body: JSON.stringify({ filePath: '/first.bin' }),
        })
        const details = (
          (await res.json()) as {
            metadata?: { file: { details: { state: string; groups?: { deals?: { route?: string; state: string }[] }[] } } }
          }
        ).metadata?.file.details
        const state = details?.state ?? '?'
        if (state !== last) seen.push(`${state} ${((performance.now() - started) / 1000).toFixed(0)} s`)
        if (firstProof === undefined && details?.groups?.some((g) => g.deals?.some((d) => d.route === 'pdp' && d.state === 'active')))
          firstProof = (performance.now() - started) / 1000
        last = state
        if (state === 'Offloaded') break
        await new Promise((r) => setTimeout(r, 1000))
      }
      const seconds = (performance.now() - started) / 1000
      console.log(
        `  ${label.padEnd(18)} Offloaded after ${seconds.toFixed(0).padStart(3)} s (ratio to target ${(seconds / 300).toFixed(2)}), first proved PDP copy after ${firstProof === undefined ? '?' : firstProof.toFixed(0)} s: ${seen.join(' → ')}`,
      )
    } finally {
      await stopAllInOne(run, dataDir)
    }
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
