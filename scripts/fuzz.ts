/**
 * Fuzzes every endpoint of the three surfaces of a freshly started stack
 * (`npm start`'s entry point, on free loopback ports, temporary DATA_DIR)
 * with malformed, oversized and hostile requests; exits 1 when any request
 * got a 5xx, no answer, or a reset before its answer.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { basicAuth, startStack } from './lib/stack.ts'
import { describeFailure, FUZZED_ENDPOINTS, runFuzz, type FuzzTarget } from './lib/fuzz.ts'

const HELP = `Usage: npm run fuzz -- [options]

  --requests <n>      requests to send (default 20000)
  --seed <text>       seed of the cases; the same seed sends the same requests (default "fuzz")
  --concurrency <n>   requests in flight at once (default 8)
  --timeout-ms <n>    longest wait for an answer before a request counts as a hang (default 15000)
  --stack-log <file>  write the stack's own log there, to see why a request failed
  -h, --help          this text

Starts the whole stack (app surface, gateway, deal service on the simulated
network) with a temporary DATA_DIR, uploads a few files, then sends the
requests over raw sockets (paths and headers byte for byte), round-robin over
${FUZZED_ENDPOINTS.length} endpoints. Prints progress, the answers by status,
and every failure with enough to replay it.
`

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '20000' },
    seed: { type: 'string', default: 'fuzz' },
    concurrency: { type: 'string', default: '8' },
    'timeout-ms': { type: 'string', default: '15000' },
    'stack-log': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
  strict: true,
})
if (values.help) {
  process.stdout.write(HELP)
  process.exit(0)
}

const PASSWORD = 'fuzz-admin-password'
const API_KEY = 'fgs_fuzz-key-0000000000000000'
const dataDir = mkdtempSync(join(tmpdir(), 'fuzz-'))
const stack = await startStack({ DATA_DIR: dataDir, ADMIN_PASSWORD: PASSWORD, API_KEY, LOG_LEVEL: 'info' })
try {
  const admin = { Authorization: basicAuth('admin', PASSWORD) }
  // Something to find: a file and a folder in the admin's area.
  await fetch(`${stack.appUrl}/remote.php/dav/files/admin/folder`, { method: 'MKCOL', headers: admin })
  await fetch(`${stack.appUrl}/remote.php/dav/files/admin/a.txt`, { method: 'PUT', headers: admin, body: 'hello fuzz\n' })
  const gatewayPassword = readFileSync(join(dataDir, 'gateway-password'), 'utf8').trim()
  const targets: FuzzTarget[] = [
    { part: 'app', url: stack.appUrl, auth: admin },
    { part: 'gateway', url: stack.gatewayUrl, auth: { Authorization: basicAuth('bridge', gatewayPassword) } },
    ...(stack.serviceUrl ? [{ part: 'service' as const, url: stack.serviceUrl, auth: { 'X-API-KEY': API_KEY } }] : []),
  ]
  const count = Number(values.requests)
  const started = Date.now()
  const report = await runFuzz({
    seed: values.seed!,
    count,
    targets,
    concurrency: Number(values.concurrency),
    timeoutMs: Number(values['timeout-ms']),
    onProgress: (done) => process.stdout.write(`\r${done}/${count} requests`),
  })
  const seconds = (Date.now() - started) / 1000
  process.stdout.write(
    `\r${report.requests} requests in ${seconds.toFixed(1)} s over ${FUZZED_ENDPOINTS.length} endpoints (app ${report.byPart.app}, gateway ${report.byPart.gateway}, service ${report.byPart.service})\n`,
  )
  process.stdout.write(
    `answers by status: ${Object.entries(report.byStatus)
      .sort()
      .map(([s, n]) => `${s}×${n}`)
      .join(' ')}\n`,
  )
  for (const f of report.failures) process.stdout.write(`FAIL ${describeFailure(f)}\n`)
  process.stdout.write(report.failures.length === 0 ? 'no 5xx, no hang, no reset\n' : `${report.failures.length} failures\n`)
  process.exitCode = report.failures.length === 0 ? 0 : 1
} finally {
  if (values['stack-log']) writeFileSync(values['stack-log'], stack.output())
  await stack.stop()
  rmSync(dataDir, { recursive: true, force: true })
}
