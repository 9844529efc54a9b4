import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AdminSettingsResponseSchema, LinkTestResultSchema } from '../../server/shared/contracts/admin-settings.ts'
import { FileInfoResponseSchema } from '../../server/shared/contracts/file-info.ts'
import { FolderStatesResponseSchema, GatewayFolderStatesResponseSchema } from '../../server/shared/contracts/folder-states.ts'
import { GatewayStatusResponseSchema } from '../../server/shared/contracts/gateway-status.ts'
import { gatewayOpenApi } from '../../server/gateway/openapi.ts'
import { MetadataResponseSchema } from '../../server/shared/contracts/metadata-record.ts'
import { TabConfigResponseSchema } from '../../server/shared/contracts/tab-config.ts'
import { ADMIN_PASSWORD, aliceAuth, basic, postMetadata, startBridgeOnRealGateway } from './helpers.ts'
import { expectToMatch } from '../helpers/contracts.ts'

/** The OpenAPI descriptions are generated from the contract schemas; these check that each route's real answers match them. */
describe('OpenAPI description of the app surface and the gateway', () => {
  let t: Awaited<ReturnType<typeof startBridgeOnRealGateway>>

  beforeAll(async () => {
    t = await startBridgeOnRealGateway()
    const put = await fetch(`${t.url}/remote.php/dav/files/alice/report.pdf`, {
      method: 'PUT',
      headers: { authorization: aliceAuth },
      body: 'x'.repeat(300_000),
    })
    expect(put.status).toBe(201)
  })
  afterAll(() => t.close())

  it('is served without login and describes the metadata route from its schemas', async () => {
    const res = await fetch(`${t.url}/ocs/v2.php/apps/gateway/openapi.json`)
    expect(res.status).toBe(200)
    const doc = (await res.json()) as any
    expect(doc.openapi).toBe('3.0.3')
    const op = doc.paths['/ocs/v2.php/apps/gateway/get-file-metadata'].post
    const body = op.requestBody.content['application/json'].schema
    expect(body.required).toEqual(['filePath'])
    expect(body.additionalProperties).toBe(false)
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '404', '412', '429', '502', '504']))
    const details = op.responses['200'].content['application/json'].schema.properties.metadata.properties.file.properties.details
    expect(details.properties.state.enum).toEqual(['Staging', 'Offloading', 'Partially offloaded', 'Offloaded', 'Unknown'])
  })

  it('matches what the metadata route really answers, with no undeclared fields', async () => {
    for (const filePath of ['/report.pdf', '/']) {
      const { status, body } = await postMetadata({ url: t.url, body: { filePath } })
      expect(status).toBe(200)
      expectToMatch(MetadataResponseSchema, body)
    }
  })

  it('describes the folder-states route on both surfaces, and matches what they really answer', async () => {
    const doc = (await (await fetch(`${t.url}/ocs/v2.php/apps/gateway/openapi.json`)).json()) as any
    const op = doc.paths['/ocs/v2.php/apps/gateway/get-folder-states'].post
    expect(op.requestBody.content['application/json'].schema.required).toEqual(['folderPath'])
    expect(Object.keys(gatewayOpenApi('test').paths as object)).toEqual(['/file-info', '/folder-states', '/status'])
    const { status, body } = await postMetadata({
      url: t.url,
      route: '/ocs/v2.php/apps/gateway/get-folder-states',
      body: { folderPath: '/' },
    })
    expect(status).toBe(200)
    expectToMatch(FolderStatesResponseSchema, body)
    const res = await fetch(`${t.gateway.url}/folder-states`, {
      method: 'POST',
      headers: { authorization: basic(t.gateway.user, t.gateway.password), 'content-type': 'application/json' },
      body: JSON.stringify({ folderPath: '/alice' }),
    })
    expectToMatch(GatewayFolderStatesResponseSchema, await res.json())
  })

  it("matches what the gateway's /file-info really answers", async () => {
    // A file, and a folder (with its per-state and per-group file counts).
    for (const filePath of ['/alice/report.pdf', '/alice']) {
      const res = await fetch(`${t.gateway.url}/file-info`, {
        method: 'POST',
        headers: { authorization: basic(t.gateway.user, t.gateway.password), 'content-type': 'application/json' },
        body: JSON.stringify({ filePath, verbose: true }),
      })
      const body = await res.json()
      expect(res.status).toBe(200)
      expectToMatch(FileInfoResponseSchema, body)
    }
  })

  it("matches what the gateway's /status really answers", async () => {
    const res = await fetch(`${t.gateway.url}/status`, {
      method: 'POST',
      headers: { authorization: basic(t.gateway.user, t.gateway.password) },
    })
    expect(res.status).toBe(200)
    expectToMatch(GatewayStatusResponseSchema, await res.json())
  })

  it('matches what the tab config, admin settings and link test routes really answer', async () => {
    const call = async (method: string, route: string, auth: string, body?: unknown) => {
      const res = await fetch(`${t.url}/ocs/v2.php/apps/gateway/${route}`, {
        method,
        headers: { authorization: auth, 'ocs-apirequest': 'true', ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      })
      expect(res.status).toBe(200)
      return res.json()
    }
    const adminAuth = basic('admin', ADMIN_PASSWORD)
    expectToMatch(TabConfigResponseSchema, await call('GET', 'config', aliceAuth))
    const saved = await call('GET', 'admin/settings', adminAuth)
    expectToMatch(AdminSettingsResponseSchema, saved)
    const mounts = [{ mountPoint: '/Filecoin', gatewayPath: '/{user}' }]
    expectToMatch(
      AdminSettingsResponseSchema,
      await call('PUT', 'admin/settings', adminAuth, { ...saved.settings, gatewayPasswordSet: undefined, mounts }),
    )
    // A link that works, and one that does not (nothing listens on port 9).
    const working = await call('POST', 'admin/test-link', adminAuth, {})
    expect(working.success).toBe(true)
    expectToMatch(LinkTestResultSchema, working)
    const broken = await call('POST', 'admin/test-link', adminAuth, { gatewayUrl: 'http://127.0.0.1:9' })
    expect(broken.success).toBe(false)
    expectToMatch(LinkTestResultSchema, broken)
  })
})
