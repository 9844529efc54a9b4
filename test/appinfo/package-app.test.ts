/**
 * `npm run package:app` end to end: a real Vite build (about 10 s), then the
 * archive unpacked with the system tar the way an admin would.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'

const ROOT = resolve(import.meta.dirname, '..', '..')
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx')
const SCRIPT = join(ROOT, 'scripts', 'package-app.ts')
const work = mkdtempSync(join(tmpdir(), 'gateway-package-'))

afterAll(() => rmSync(work, { recursive: true, force: true }))

describe('npm run package:app', () => {
  it('prints its usage with --help', () => {
    const run = spawnSync(TSX, [SCRIPT, '--help'], { cwd: ROOT, encoding: 'utf8' })
    expect(run.status).toBe(0)
    expect(run.stdout).toContain('gateway-<version>.tar.gz')
  })

  it('refuses an unknown option', () => {
    const run = spawnSync(TSX, [SCRIPT, '--bogus'], { cwd: ROOT, encoding: 'utf8' })
    expect(run.status).not.toBe(0)
  })

  it('builds an archive that unpacks into apps/ as gateway/, within the JS budget', () => {
    const run = spawnSync(TSX, [SCRIPT, '--out', join(work, 'dist'), '--json'], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 })
    expect(run.status, run.stderr).toBe(0)
    const summary = JSON.parse(run.stdout.trim().split('\n').pop()!) as {
      archive: string
      version: string
      nextcloud: { min: string; max: string }
      initialJs: { files: string[]; gzipBytes: number; budgetBytes: number }
    }
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }
    expect(summary.archive).toBe(join(work, 'dist', `gateway-${pkg.version}.tar.gz`))
    // The Nextcloud releases it installs on: 33 to 35 (29–32 lack @nextcloud/files 4's registries).
    expect(summary.nextcloud).toEqual({ min: '33', max: '35' })

    const apps = join(work, 'apps')
    spawnSync('mkdir', ['-p', apps])
    const untar = spawnSync('tar', ['-xzf', summary.archive, '-C', apps], { encoding: 'utf8' })
    expect(untar.status, untar.stderr).toBe(0)
    expect(untar.stderr).toBe('')
    for (const file of [
      'appinfo/info.xml',
      'js/gateway-init.mjs',
      'js/gateway-admin.mjs',
      'lib/AppInfo/Application.php',
      'lib/Listener/LoadFilesScriptsListener.php',
      'lib/Settings/AdminSettings.php',
      'templates/admin.php',
      'img/app-dark.svg',
      'README.md',
    ]) {
      expect(existsSync(join(apps, 'gateway', file)), file).toBe(true)
    }
    expect(readFileSync(join(apps, 'gateway', 'appinfo', 'info.xml'), 'utf8')).toBe(readFileSync(join(ROOT, 'appinfo', 'info.xml'), 'utf8'))
    // Every lazy chunk the entry points name is in the archive.
    const main = readFileSync(join(apps, 'gateway', 'js', 'gateway-init.mjs'), 'utf8')
    for (const chunk of main.matchAll(/js\/([\w-]+\.chunk\.mjs)/g)) {
      expect(existsSync(join(apps, 'gateway', 'js', chunk[1])), chunk[1]).toBe(true)
    }
    const list = spawnSync('tar', ['-tzf', summary.archive], { encoding: 'utf8' }).stdout.trim().split('\n')
    expect(list.every((name) => name.startsWith('gateway/'))).toBe(true)
    expect(list.some((name) => name.endsWith('.map'))).toBe(false)

    expect(summary.initialJs.files[0]).toBe('gateway-init.mjs')
    expect(summary.initialJs.files.some((f) => f.startsWith('GatewayTab'))).toBe(false)
    // Every Files page runs it, tab opened or not: registration only (Vue, the view and @nextcloud/files are lazy).
    expect(summary.initialJs.gzipBytes).toBeLessThanOrEqual(15 * 1024)
    const entry = readFileSync(join(ROOT, 'js', 'gateway-init.mjs'), 'utf8')
    expect(entry).not.toMatch(/createApp|DOMPurify/)
  }, 120_000)
})
