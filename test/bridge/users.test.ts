import { afterEach, describe, expect, it } from 'vitest'
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { BridgeConfig } from '../../server/shared/config.ts'
import { startServer } from '../../server/shared/http.ts'
import { createBridge } from '../../server/bridge/index.ts'
import { basic, logger } from './helpers.ts'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'bridge-users-'))
  dirs.push(d)
  return d
}

const config = (dataDir: string, extra: Partial<BridgeConfig> = {}): BridgeConfig => ({
  host: '127.0.0.1',
  port: 0,
  dataDir,
  network: 'simnet',
  simnetGenesis: 1704067200,
  // Nothing listens there: these tests never reach the gateway.
  gatewayUrl: 'http://127.0.0.1:9',
  gatewayTimeoutMs: 1000,
  pathMap: '/{user}',
  ipfsGateway: 'https://ipfs.io',
  ...extra,
})

/** Answers whether `user:password` gets in, using an endpoint that needs no gateway. */
async function canLogIn(dataDir: string, user: string, password: string): Promise<number> {
  const bridge = await createBridge(config(dataDir), { logger, print: () => {} })
  const server = await startServer(bridge.listener, 0)
  try {
    const res = await fetch(`${server.url}/ocs/v2.php/cloud/user?format=json`, { headers: { authorization: basic(user, password) } })
    return res.status
  } finally {
    await server.close(100)
    await bridge.close()
  }
}

function usersCli(dataDir: string, args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      ['--import', 'tsx', 'scripts/users.ts', ...args],
      { env: { ...process.env, DATA_DIR: dataDir } },
      (err, stdout, stderr) => {
        resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr })
      },
    )
    child.stdin!.end(input ?? '')
  })
}

describe('first start', () => {
  it('creates admin with a random password printed once and saved 0600', async () => {
    const dataDir = tempDir()
    const printed: string[] = []
    const first = await createBridge(config(dataDir), { logger, print: (l) => printed.push(l) })
    expect(await first.users.get('admin')).toMatchObject({ isAdmin: true })
    await first.close()
    const file = join(dataDir, 'admin-password')
    const password = readFileSync(file, 'utf8').trim()
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(printed).toHaveLength(1)
    expect(printed[0]).toContain(password)

    const again: string[] = []
    const second = await createBridge(config(dataDir), { logger, print: (l) => again.push(l) })
    await second.close()
    expect(again).toHaveLength(0)
    expect(await canLogIn(dataDir, 'admin', password)).toBe(200)
    expect(await canLogIn(dataDir, 'admin', 'not-the-password')).toBe(401)
  })

  it('uses ADMIN_PASSWORD when set', async () => {
    const dataDir = tempDir()
    const printed: string[] = []
    const bridge = await createBridge(config(dataDir, { adminPassword: 'chosen-admin-pw' }), { logger, print: (l) => printed.push(l) })
    await bridge.close()
    expect(printed).toHaveLength(0)
    expect(await canLogIn(dataDir, 'admin', 'chosen-admin-pw')).toBe(200)
  })

  it('says plainly that a later ADMIN_PASSWORD is ignored, and how to change the password, rather than seem to take it', async () => {
    const dataDir = tempDir()
    await (await createBridge(config(dataDir), { logger, print: () => {} })).close()
    const password = readFileSync(join(dataDir, 'admin-password'), 'utf8').trim()

    const printed: string[] = []
    const later = await createBridge(config(dataDir, { adminPassword: 'demo-password' }), { logger, print: (l) => printed.push(l) })
    await later.close()
    expect(printed).toEqual([
      expect.stringMatching(
        /^ADMIN_PASSWORD is ignored: user "admin" was created at the first start and keeps its password .*npm run users -- passwd admin$/,
      ),
    ])
    expect(await canLogIn(dataDir, 'admin', password)).toBe(200)
    expect(await canLogIn(dataDir, 'admin', 'demo-password')).toBe(401)

    // The same password as the admin's says nothing.
    const same: string[] = []
    await (await createBridge(config(dataDir, { adminPassword: password }), { logger, print: (l) => same.push(l) })).close()
    expect(same).toEqual([])
  })
})

describe('npm run users', () => {
  it('adds users, sets passwords, makes and revokes app passwords, deletes', async () => {
    const root = tempDir()
    const appDir = join(root, 'app')
    const help = await usersCli(root, ['--help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('app-password')

    expect((await usersCli(root, ['add', 'carol', '--password', 'carol-pass-1', '--display-name', 'Carol'])).code).toBe(0)
    expect(await canLogIn(appDir, 'carol', 'carol-pass-1')).toBe(200)

    const piped = await usersCli(root, ['add', 'dave'], 'dave-piped-pw\n')
    expect(piped.code).toBe(0)
    expect(await canLogIn(appDir, 'dave', 'dave-piped-pw')).toBe(200)

    const generated = await usersCli(root, ['passwd', 'dave', '--generate'])
    const newPassword = /changed to (\S+)/.exec(generated.stdout)?.[1]
    expect(newPassword).toBeDefined()
    expect(await canLogIn(appDir, 'dave', newPassword!)).toBe(200)
    expect(await canLogIn(appDir, 'dave', 'dave-piped-pw')).toBe(401)

    const app = await usersCli(root, ['app-password', 'carol', '--name', 'phone'])
    const token = app.stdout.trim().split('\n').at(-1)!
    expect(token).toMatch(/^[A-Za-z0-9]{5}(-[A-Za-z0-9]{5}){4}$/)
    expect(await canLogIn(appDir, 'carol', token)).toBe(200)
    expect((await usersCli(root, ['app-passwords', 'carol'])).stdout).toContain('phone')
    expect((await usersCli(root, ['revoke', 'carol'])).stdout).toContain('Revoked 1')
    expect(await canLogIn(appDir, 'carol', token)).toBe(401)

    const list = await usersCli(root, ['list'])
    expect(list.stdout).toMatch(/^carol\tCarol$/m)
    expect(list.stdout).toMatch(/^dave\t/m)

    expect((await usersCli(root, ['delete', 'dave'])).code).toBe(0)
    expect(await canLogIn(appDir, 'dave', newPassword!)).toBe(401)
    expect((await usersCli(root, ['delete', 'dave'])).code).toBe(1)
  })

  it('refuses bad input with a non-zero exit', async () => {
    const root = tempDir()
    expect((await usersCli(root, ['add', '../etc', '--password', 'long-enough-1'])).code).toBe(1)
    expect((await usersCli(root, ['add', 'eve', '--password', 'short'])).code).toBe(1)
    expect((await usersCli(root, ['frobnicate', 'x'])).code).toBe(2)
    expect((await usersCli(root, ['add'])).code).toBe(2)
  })
})
