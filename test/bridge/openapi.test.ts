import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MetadataResponseSchema } from '../../server/bridge/metadata-record.ts'
import { FileInfoResponseSchema } from '../../server/gateway/openapi.ts'
import { aliceAuth, basic, postMetadata, startBridgeOnRealGateway } from './helpers.ts'

/** The OpenAPI descriptions are generated from the schemas; these check that real answers match them. */
describe('OpenAPI description of the app surface and the gateway', () => {
  let t: Awaited<ReturnType<typeof startBridgeOnRealGateway>>

  beforeAll(async () => {
    t = await startBridgeOnRealGateway()
    const put = await fetch(`${t.url}/remote.php/dav/files/alice/report.pdf`, {
      method: 'PUT', headers: { authorization: aliceAuth }, body: 'x'.repeat(300_000),
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
      // Parsing strips undeclared keys, so equality means nothing is undocumented.
      expect(MetadataResponseSchema.parse(body)).toEqual(body)
    }
  })

  it('matches what the gateway\'s /file-info really answers', async () => {
    // A file, and a folder (with its per-state and per-group file counts).
    for (const filePath of ['/alice/report.pdf', '/alice']) {
      const res = await fetch(`${t.gateway.url}/file-info`, {
        method: 'POST',
        headers: { authorization: basic(t.gateway.user, t.gateway.password), 'content-type': 'application/json' },
        body: JSON.stringify({ filePath, verbose: true }),
      })
      const body = await res.json()
      expect(res.status).toBe(200)
      expect(FileInfoResponseSchema.parse(body)).toEqual(body)
    }
  })
})
