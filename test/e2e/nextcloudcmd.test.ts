/**
 * Nextcloud's own desktop sync engine (Debian's `nextcloud-desktop-cmd`,
 * `nextcloudcmd`) against the whole stack, both ways: it reads the same
 * properties and headers the desktop client does (oc:id, oc:permissions,
 * OC-FileId, etags), so this is the test that a real person's sync works.
 */
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { basicAuth, startStack, type RunningStack } from '../../scripts/lib/stack.ts'

const hasNextcloudcmd = spawnSync('nextcloudcmd', ['--version']).status === 0
if (!hasNextcloudcmd) console.warn('Skipping nextcloudcmd tests: Debian package "nextcloud-desktop-cmd" is missing (.ci/run installs it)')

const PASSWORD = 'sync-admin-password'

describe.skipIf(!hasNextcloudcmd)('two-way sync with nextcloudcmd', () => {
  let stack: RunningStack
  let dataDir: string
  let local: string
  const remote = (path: string, init: RequestInit = {}) =>
    fetch(`${stack.appUrl}/remote.php/dav/files/admin${path}`, {
      ...init,
      headers: { authorization: basicAuth('admin', PASSWORD), ...init.headers },
    })
  /** One sync run; answers the instructions it carried out (`NEW sub/a.txt`, `RENAME …`), not the no-ops. */
  const sync = () => {
    const run = spawnSync('nextcloudcmd', ['--non-interactive', '-u', 'admin', '-p', PASSWORD, local, stack.appUrl], {
      encoding: 'utf8',
      timeout: 90_000,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const log = run.stdout + run.stderr
    expect(run.status, log.slice(-3000)).toBe(0)
    return [...log.matchAll(/Starting CSyncEnums::CSYNC_INSTRUCTION_(\w+) propagation of "([^"]+)"/g)]
      .filter((m) => m[1] !== 'IGNORE')
      .map((m) => `${m[1]} ${m[2]}`)
  }
  const localFiles = () =>
    (readdirSync(local, { recursive: true }) as string[]).filter((f) => !f.split('/').some((s) => s.startsWith('.'))).sort()

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'e2e-sync-data-'))
    local = mkdtempSync(join(tmpdir(), 'e2e-sync-local-'))
    stack = await startStack({ DATA_DIR: dataDir, ADMIN_PASSWORD: PASSWORD })
  })
  afterAll(async () => {
    await stack?.stop()
    rmSync(dataDir, { recursive: true, force: true })
    rmSync(local, { recursive: true, force: true })
  })

  it('uploads a local tree', async () => {
    writeFileSync(join(local, 'one.txt'), 'hello one\n')
    writeFileSync(join(local, 'keep.txt'), 'unchanged\n')
    mkdirSync(join(local, 'sub'))
    writeFileSync(join(local, 'sub', 'two.txt'), 'two\n')
    expect(sync()).toEqual(expect.arrayContaining(['NEW one.txt', 'NEW keep.txt', 'NEW sub', 'NEW sub/two.txt']))
    expect(await (await remote('/sub/two.txt')).text()).toBe('two\n')
  }, 120_000)

  it('pulls down a remote change, a remote file and a remote rename (as a rename, by file id)', async () => {
    expect((await remote('/one.txt', { method: 'PUT', body: 'changed on the server\n' })).status).toBe(204)
    expect((await remote('/remote-new.txt', { method: 'PUT', body: 'made remotely\n' })).status).toBe(201)
    const dest = `${stack.appUrl}/remote.php/dav/files/admin/sub/two-renamed.txt`
    expect((await remote('/sub/two.txt', { method: 'MOVE', headers: { destination: dest } })).status).toBe(201)
    const done = sync()
    expect(done).toEqual(expect.arrayContaining(['SYNC one.txt', 'NEW remote-new.txt', 'RENAME sub/two-renamed.txt']))
    expect(readFileSync(join(local, 'one.txt'), 'utf8')).toBe('changed on the server\n')
    expect(localFiles()).toEqual(['keep.txt', 'one.txt', 'remote-new.txt', 'sub', 'sub/two-renamed.txt'])
  }, 120_000)

  it('removes a locally deleted file on the server and keeps both sides of a conflict', async () => {
    rmSync(join(local, 'keep.txt'))
    writeFileSync(join(local, 'one.txt'), 'local edit\n')
    expect((await remote('/one.txt', { method: 'PUT', body: 'remote edit\n' })).status).toBe(204)
    sync()
    expect((await remote('/keep.txt')).status).toBe(404)
    // Nextcloud's rule: the server's version takes the name, the local one is kept as a conflicted copy.
    expect(readFileSync(join(local, 'one.txt'), 'utf8')).toBe('remote edit\n')
    const conflict = localFiles().find((f) => f.startsWith('one (conflicted copy'))
    expect(conflict).toBeDefined()
    expect(readFileSync(join(local, conflict!), 'utf8')).toBe('local edit\n')
  }, 120_000)

  it('transfers nothing on a run after everything is in sync', () => {
    expect(sync()).toEqual([])
  }, 120_000)
})
