import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { DataFolderInUse, lockDataFolder } from '../../server/gateway/data-lock.ts'

const dir = mkdtempSync(join(tmpdir(), 'data-lock-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Tries the lock from another process; resolves with its exit code and what it printed. */
function tryFromChild(): Promise<{ code: number | null; out: string }> {
  const script = `import { lockDataFolder } from './server/gateway/data-lock.ts'
try { lockDataFolder(${JSON.stringify(dir)}); console.log('locked') } catch (err) { console.log(err.name + ': ' + err.message); process.exit(3) }`
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout.on('data', (c: Buffer) => (out += c))
  child.stderr.on('data', (c: Buffer) => (out += c))
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, out })))
}

describe('one gateway per data folder', () => {
  it('refuses a second gateway on the same folder, naming the first, and lets one start once it is gone', async () => {
    const first = lockDataFolder(dir)
    const refused = await tryFromChild()
    expect(refused.code).toBe(3)
    expect(refused.out).toContain(`DataFolderInUse: another gateway is running on ${dir} (pid ${process.pid})`)
    // In this process too (a second createGateway on the same folder).
    expect(() => lockDataFolder(dir)).toThrow(DataFolderInUse)
    first.release()
    expect((await tryFromChild()).out).toContain('locked')
  })

  it('is free again when its holder dies without releasing it (the OS drops the file lock)', async () => {
    // The child above took the lock and exited without release(): it must not be stale.
    const again = lockDataFolder(dir)
    again.release()
  })
})
