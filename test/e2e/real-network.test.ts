import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { runGatewayRole } from '../helpers/gateway-role.ts'

const dataDir = mkdtempSync(join(tmpdir(), 'real-network-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

/** Runs `npm start -- --role gateway` until it listens, and returns what it logged. */
const gatewayLog = async (env: Record<string, string>) =>
  (await runGatewayRole({ DATA_DIR: dataDir, GATEWAY_USER: 'bridge', GATEWAY_PASSWORD: 'secret-password-1', ...env })).out

describe('the gateway on a real network (calibration)', () => {
  const real = {
    NETWORK: 'calibration',
    LOTUS_URL: 'http://127.0.0.1:9/rpc/v1',
    SERVICE_URL: 'http://127.0.0.1:9',
    SERVICE_API_KEY: 'fgs_test-key-0000000000000000',
  }

  it('refuses to make deals with a loopback GATEWAY_PUBLIC_URL, and says why', async () => {
    const log = await gatewayLog({ ...real, GATEWAY_PUBLIC_URL: 'http://127.0.0.1:9011' })
    expect(log).toMatch(/deals are off: GATEWAY_PUBLIC_URL \(http:\/\/127\.0\.0\.1:9011\) is a loopback or private address/)
    expect(log).toMatch(/"deals":false/)
  })

  it('refuses without a wallet key, rather than making one on a real network', async () => {
    const log = await gatewayLog({ ...real, GATEWAY_PUBLIC_URL: 'https://gateway.example.org' })
    expect(log).toMatch(/no wallet key: deals are off until one is made or imported/)
    expect(log).toMatch(/"deals":false/)
  })
})
