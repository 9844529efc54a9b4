import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'

const dataDir = mkdtempSync(join(tmpdir(), 'real-network-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

/** Runs `npm start -- --role gateway` until it listens, and returns what it logged. */
function gatewayLog(env: Record<string, string>): Promise<string> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts', '--role', 'gateway'], {
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      GATEWAY_PORT: '0',
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
      GATEWAY_USER: 'bridge',
      GATEWAY_PASSWORD: 'secret-password-1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`gateway did not start:\n${out}`))
    }, 30_000)
    const onData = (c: Buffer) => {
      out += c.toString()
      if (!out.includes('gateway listening')) return
      clearTimeout(timer)
      child.kill('SIGTERM')
      child.once('exit', () => resolve(out))
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()))
  })
}

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
