/**
 * Every endpoint of the three surfaces, fuzzed with malformed, oversized and
 * hostile requests (scripts/lib/fuzz.ts; `npm run fuzz` runs more): no 5xx,
 * no hang, no reset before the answer.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { describeFailure, FUZZED_ENDPOINTS, runFuzz } from '../../scripts/lib/fuzz.ts'
import { basicAuth, startStack, type RunningStack } from '../../scripts/lib/stack.ts'

const PASSWORD = 'fuzz-admin-password'
const API_KEY = 'fgs_fuzz-key-0000000000000000'

describe('fuzzing every endpoint', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'fuzz-test-'))
  let stack: RunningStack
  beforeAll(async () => {
    stack = await startStack({ DATA_DIR: dataDir, ADMIN_PASSWORD: PASSWORD, API_KEY })
    const admin = { Authorization: basicAuth('admin', PASSWORD) }
    await fetch(`${stack.appUrl}/remote.php/dav/files/admin/folder`, { method: 'MKCOL', headers: admin })
    await fetch(`${stack.appUrl}/remote.php/dav/files/admin/a.txt`, { method: 'PUT', headers: admin, body: 'hello fuzz\n' })
  })
  afterAll(async () => {
    await stack?.stop()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it(`answers ${FUZZED_ENDPOINTS.length} endpoints' hostile requests without a 5xx, a hang or a reset`, async () => {
    const gatewayPassword = readFileSync(join(dataDir, 'gateway-password'), 'utf8').trim()
    const report = await runFuzz({
      seed: 'ci',
      count: 6000,
      targets: [
        { part: 'app', url: stack.appUrl, auth: { Authorization: basicAuth('admin', PASSWORD) } },
        { part: 'gateway', url: stack.gatewayUrl, auth: { Authorization: basicAuth('bridge', gatewayPassword) } },
        { part: 'service', url: stack.serviceUrl!, auth: { 'X-API-KEY': API_KEY } },
      ],
    })
    expect(report.requests).toBe(6000)
    // Every part really answered, mostly with refusals.
    expect(report.byPart.service).toBeGreaterThan(1000)
    expect(report.byPart.gateway).toBeGreaterThan(300)
    expect(report.byStatus['400']).toBeGreaterThan(500)
    expect(report.failures.map(describeFailure)).toEqual([])
  }, 180_000)
})
