/**
 * exapp/appinfo/info.xml, the ExApp's description for AppAPI: the same app
 * id, version and Nextcloud range as the PHP app's, and routes that let
 * AppAPI's proxy through exactly what the ExApp serves for a user. A route's
 * url is a regex AppAPI matches as `~^(?:url)~i` against the path with its
 * leading slash, and its verb by substring (nextcloud/app_api
 * lib/Controller/ExAppProxyController.php, passesExAppProxyRoutesChecks).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { FILE_ACTION, FILE_ACTION_ROUTE } from '../../server/bridge/exapp/lifecycle.ts'
import { FILE_METADATA_ROUTE } from '../../server/bridge/routes/file-metadata.ts'
import { FOLDER_STATES_ROUTE } from '../../server/bridge/routes/folder-states.ts'
import { TAB_CONFIG_ROUTE } from '../../server/bridge/routes/tab-config.ts'

const ROOT = join(import.meta.dirname, '..', '..')
const exInfo = readFileSync(join(ROOT, 'exapp', 'appinfo', 'info.xml'), 'utf8')
const appInfo = readFileSync(join(ROOT, 'appinfo', 'info.xml'), 'utf8')
const tag = (xml: string, name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1]
const routes = [
  ...exInfo.matchAll(/<route>\s*<url>([^<]+)<\/url>\s*<verb>([^<]+)<\/verb>\s*<access_level>([^<]+)<\/access_level>\s*<\/route>/g),
].map(([, url, verb, access]) => ({ url, verb, access }))
/** The route AppAPI would apply to a request, as its proxy picks one: the first whose path and verb match. */
const routeFor = (method: string, path: string) =>
  routes.find((r) => new RegExp(`^(?:${r.url})`, 'i').test(path) && r.verb.toLowerCase().includes(method.toLowerCase()))

describe('the ExApp info.xml', () => {
  it('has the PHP app’s id, version and Nextcloud range, and a docker image of that version', () => {
    for (const name of ['id', 'version', 'namespace']) expect(tag(exInfo, name)).toBe(tag(appInfo, name))
    expect(exInfo).toContain('<nextcloud min-version="33" max-version="35"/>')
    expect(tag(exInfo, 'image-tag')).toBe(tag(appInfo, 'version'))
    expect(tag(exInfo, 'registry')).toBeTruthy()
  })

  it('lets the user routes through for users, the icon for anyone, and nothing else', () => {
    expect(routeFor('POST', FILE_METADATA_ROUTE)?.access).toBe('USER')
    expect(routeFor('POST', FOLDER_STATES_ROUTE)?.access).toBe('USER')
    expect(routeFor('GET', TAB_CONFIG_ROUTE)?.access).toBe('USER')
    expect(routeFor('POST', FILE_ACTION_ROUTE)?.access).toBe('USER')
    expect(routeFor('GET', `/${FILE_ACTION.icon}`)?.access).toBe('PUBLIC')
    // Admin routes, AppAPI's own lifecycle endpoints and another verb stay closed behind the proxy.
    for (const [method, path] of [
      ['PUT', '/ocs/v2.php/apps/gateway/admin/settings'],
      ['POST', '/ocs/v2.php/apps/gateway/admin/test-link'],
      ['POST', '/init'],
      ['PUT', '/enabled'],
      ['GET', FILE_METADATA_ROUTE],
      ['POST', `${FILE_METADATA_ROUTE}x`],
    ]) {
      expect(routeFor(method, path), `${method} ${path}`).toBeUndefined()
    }
  })

  it('declares only variables the bridge reads', () => {
    const config = readFileSync(join(ROOT, 'server', 'shared', 'config.ts'), 'utf8')
    const names = [...exInfo.matchAll(/<variable>\s*<name>([^<]+)<\/name>/g)].map((m) => m[1])
    expect(names).toEqual(['GATEWAY_URL', 'GATEWAY_USER', 'GATEWAY_PASSWORD', 'NETWORK'])
    for (const name of names) expect(config).toMatch(new RegExp(`\\b${name}: z\\.`))
  })
})
