/**
 * The Nextcloud side of the app: info.xml valid against the app store's
 * schema (../shared/nextcloud/info.xsd, beside the repository), consistent
 * with package.json and lib/, and every PHP file free of syntax errors.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = resolve(import.meta.dirname, '..', '..')
const INFO = join(ROOT, 'appinfo', 'info.xml')
const XSD = resolve(ROOT, '..', 'shared', 'nextcloud', 'info.xsd')

const has = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0
const XMLLINT = has('xmllint')
const PHP = has('php')

function phpFiles(dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = join(dir, e.name)
    return e.isDirectory() ? phpFiles(full) : e.name.endsWith('.php') ? [full] : []
  })
}

const info = readFileSync(INFO, 'utf8')
const tag = (name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(info)?.[1]

describe('appinfo/info.xml', () => {
  it.skipIf(!XMLLINT || !existsSync(XSD))(
    `is valid against Nextcloud's app schema${XMLLINT ? '' : ' (skipped: xmllint missing, apt-get install libxml2-utils)'}${existsSync(XSD) ? '' : ' (skipped: ../shared/nextcloud/info.xsd missing)'}`,
    () => {
      const run = spawnSync('xmllint', ['--noout', '--schema', XSD, INFO], { encoding: 'utf8' })
      expect(run.stderr).toContain('validates')
      expect(run.status).toBe(0)
    },
  )

  it.skipIf(!XMLLINT || !existsSync(XSD))('the schema check does fail on a broken info.xml', () => {
    const broken = info.replace('<category>files</category>', '<category>storage</category>')
    const run = spawnSync('xmllint', ['--noout', '--schema', XSD, '-'], { input: broken, encoding: 'utf8' })
    expect(run.status).not.toBe(0)
  })

  it('declares app id gateway, version of package.json, Nextcloud 33–35', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }
    expect(tag('id')).toBe('gateway')
    expect(tag('version')).toBe(pkg.version)
    expect(tag('namespace')).toBe('Gateway')
    expect(info).toMatch(/<nextcloud min-version="33" max-version="35"\/>/)
  })

  it('names admin settings classes that exist in lib/', () => {
    const classes = [...info.matchAll(/<(?:admin|admin-section)>OCA\\Gateway\\([^<]+)<\//g)].map((m) => m[1])
    expect(classes).toEqual(['Settings\\AdminSettings', 'Settings\\AdminSection'])
    for (const cls of classes) {
      const file = join(ROOT, 'lib', ...cls.split('\\')) + '.php'
      expect(readFileSync(file, 'utf8')).toMatch(new RegExp(`class ${cls.split('\\').pop()} implements`))
    }
  })
})

describe('PHP', () => {
  const files = [...phpFiles(join(ROOT, 'lib')), ...phpFiles(join(ROOT, 'templates'))]

  it('has the bootstrap, the sidebar listener and the admin classes', () => {
    const names = files.map((f) => f.slice(ROOT.length + 1))
    expect(names).toEqual(
      expect.arrayContaining([
        'lib/AppInfo/Application.php',
        'lib/Listener/LoadFilesScriptsListener.php',
        'lib/Settings/AdminSettings.php',
        'lib/Settings/AdminSection.php',
        'templates/admin.php',
      ]),
    )
  })

  it.skipIf(!PHP)(`every file passes php -l${PHP ? '' : ' (skipped: php missing, apt-get install php8.2-cli)'}`, () => {
    for (const file of files) {
      const run = spawnSync('php', ['-l', file], { encoding: 'utf8' })
      expect(run.status, `${file}: ${run.stdout}${run.stderr}`).toBe(0)
    }
  })

  it('loads the built scripts by the names Vite gives them', () => {
    const listener = readFileSync(join(ROOT, 'lib', 'Listener', 'LoadFilesScriptsListener.php'), 'utf8')
    const application = readFileSync(join(ROOT, 'lib', 'AppInfo', 'Application.php'), 'utf8')
    const settings = readFileSync(join(ROOT, 'lib', 'Settings', 'AdminSettings.php'), 'utf8')
    // An init script, before the Files app starts, on both events Nextcloud 33 to 35 dispatch on the Files page.
    expect(listener).toContain("Util::addInitScript(Application::APP_ID, 'gateway-init')")
    expect(application).toContain('registerEventListener(LoadAdditionalScriptsEvent::class, LoadFilesScriptsListener::class)')
    expect(application).toContain('registerEventListener(LoadSidebar::class, LoadFilesScriptsListener::class)')
    expect(settings).toContain("Util::addScript(Application::APP_ID, 'gateway-admin')")
    expect(readFileSync(join(ROOT, 'templates', 'admin.php'), 'utf8')).toContain('id="gateway-admin-settings"')
  })
})
