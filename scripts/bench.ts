/**
 * Measures, on loopback, in one run:
 *  1. get-file-metadata through the bridge versus /file-info on the gateway directly
 *     (requests/s, p50/p99 latency, ratio);
 *  2. ingest of a large upload through WebDAV to CID + CAR + piece CID versus
 *     node's own SHA-256 over the same bytes (MB/s, ratio).
 * The gateway and the app surface run as separate processes (`--role`), as deployed.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createHash, randomFillSync } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'

const HELP = `Usage: npm run bench -- [options]

  --duration <s>      seconds per throughput run (default 10)
  --connections <n>   concurrent connections for throughput runs (default 32)
  --ingest-mib <n>    size of the ingest upload in MiB (default 256)
  --only <what>       metadata | ingest (default: both)
  -h, --help          this text

Starts its own gateway and app surface on free loopback ports with a
temporary DATA_DIR, and removes it afterwards.
`

const { values: opts } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
    'ingest-mib': { type: 'string', default: '256' },
    only: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
})
if (opts.help) {
  process.stdout.write(HELP)
  process.exit(0)
}

const duration = Number(opts.duration)
const connections = Number(opts.connections)
const ingestMiB = Number(opts['ingest-mib'])
const USER = 'admin'
const PASSWORD = 'bench-password-1'
const GATEWAY_USER = 'bridge'
const GATEWAY_PASSWORD = 'bench-gateway-secret'
const basic = (u: string, p: string) => 'Basic ' + Buffer.from(`${u}:${p}`).toString('base64')

interface Role {
  child: ChildProcess
  url: string
}

/** A free loopback port, found by letting the kernel pick one. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })
}

/**
 * Starts `server/main.ts --role <role>` on a free port and resolves once it answers.
 * Logs stay at `warn` so that request logging is not what gets measured.
 */
async function startRole(role: 'gateway' | 'app', env: Record<string, string>): Promise<Role> {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts', '--role', role], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env, [role === 'app' ? 'PORT' : 'GATEWAY_PORT']: String(port) },
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

async function load(title: string, url: string, headers: Record<string, string>, body: string) {
  const result = await autocannon({ url, method: 'POST', headers, body, connections, duration })
  if (result.non2xx || result.errors) throw new Error(`${title}: ${result.non2xx} non-2xx, ${result.errors} errors`)
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 }
}

async function main() {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-'))
  const common = { GATEWAY_USER, GATEWAY_PASSWORD, HOST: '127.0.0.1' }
  const gateway = await startRole('gateway', {
    ...common, DATA_DIR: dataDir, GROUP_IDLE_SECONDS: '1',
  })
  const app = await startRole('app', {
    ...common, DATA_DIR: dataDir, GATEWAY_URL: gateway.url, ADMIN_PASSWORD: PASSWORD,
  })
  const userAuth = basic(USER, PASSWORD)
  const filesUrl = `${app.url}/remote.php/dav/files/${USER}`
  console.log(`gateway ${gateway.url} (pid ${gateway.child.pid}), app ${app.url} (pid ${app.child.pid}); ${connections} connections, ${duration} s per run\n`)

  try {
    if (opts.only !== 'ingest') {
      const sample = randomFillSync(Buffer.alloc(3 * 256 * 1024 + 1000))
      const uploaded = await put(`${filesUrl}/bench-metadata.bin`, userAuth, sample)
      if (uploaded.status >= 300) throw new Error(`upload answered ${uploaded.status}`)

      const direct = await load('direct', `${gateway.url}/file-info`,
        { authorization: basic(GATEWAY_USER, GATEWAY_PASSWORD), 'content-type': 'application/json' },
        JSON.stringify({ filePath: `/${USER}/bench-metadata.bin`, verbose: true }))
      const bridged = await load('bridge', `${app.url}/ocs/v2.php/apps/gateway/get-file-metadata`,
        { authorization: userAuth, 'content-type': 'application/json', 'ocs-apirequest': 'true' },
        JSON.stringify({ filePath: '/bench-metadata.bin' }))
      console.log('get-file-metadata (bridge) vs /file-info (gateway direct)')
      console.log(`  gateway direct : ${direct.rps.toFixed(0)} req/s, p50 ${direct.p50} ms, p99 ${direct.p99} ms`)
      console.log(`  through bridge : ${bridged.rps.toFixed(0)} req/s, p50 ${bridged.p50} ms, p99 ${bridged.p99} ms`)
      console.log(`  ratio bridge/direct throughput: ${(bridged.rps / direct.rps).toFixed(2)} (target >= 0.70)\n`)
    }

    if (opts.only !== 'metadata') {
      const bytes = randomFillSync(Buffer.alloc(ingestMiB * 1024 * 1024))
      const mb = bytes.length / 1e6

      const hashStart = performance.now()
      const hash = createHash('sha256')
      for (let o = 0; o < bytes.length; o += 1 << 20) hash.update(bytes.subarray(o, o + (1 << 20)))
      hash.digest()
      const shaSeconds = (performance.now() - hashStart) / 1000

      const path = `/${USER}/bench-ingest.bin`
      const started = performance.now()
      const uploaded = await put(`${gateway.url}${encodeURI(path)}`, basic(GATEWAY_USER, GATEWAY_PASSWORD), bytes)
      if (uploaded.status >= 300) throw new Error(`ingest upload answered ${uploaded.status}`)
      // Done when every group holding the file has its CAR and piece CID.
      for (;;) {
        const info = await fileInfo(gateway.url, path)
        const groups = info.result?.file.details.groups ?? []
        if (groups.length && groups.every((g) => g.state === 'ready_for_deals')) break
        await new Promise((r) => setTimeout(r, 100))
      }
      const totalSeconds = (performance.now() - started) / 1000
      const putSeconds = uploaded.ms / 1000

      console.log(`ingest of ${ingestMiB} MiB through WebDAV (gateway, GROUP_IDLE_SECONDS=1)`)
      console.log(`  node sha-256             : ${(mb / shaSeconds).toFixed(0)} MB/s`)
      console.log(`  PUT → CID (durable)      : ${(mb / putSeconds).toFixed(0)} MB/s (${putSeconds.toFixed(2)} s)`)
      console.log(`  PUT → CAR + piece CID    : ${(mb / totalSeconds).toFixed(0)} MB/s (${totalSeconds.toFixed(2)} s, includes up to 1 s idle wait for the last group)`)
      console.log(`  ratio to sha-256 (CID)   : ${(shaSeconds / putSeconds).toFixed(2)}`)
      console.log(`  ratio to sha-256 (piece) : ${(shaSeconds / totalSeconds).toFixed(2)}`)
      console.log(`  gateway peak RSS         : ${peakRssMiB(gateway.child.pid).toFixed(0)} MiB`)
    }
  } finally {
    app.child.kill('SIGTERM')
    gateway.child.kill('SIGTERM')
    await Promise.all([app, gateway].map((r) => new Promise((res) => r.child.once('exit', res))))
    rmSync(dataDir, { recursive: true, force: true })
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
