import express from 'express'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../server/shared/http.ts'
import { basic, postMetadata, startBridge, type TestBridge } from './helpers.ts'
import { NC_ADMIN, NC_ALICE, ncAdmin, ncAlice } from './nextcloud-helpers.ts'
import { startNextcloudStandIn, type NextcloudStandIn } from './nextcloud-stand-in.ts'

const RECORDED = JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', 'cidgravity', 'file-info.json'), 'utf8')) as Record<
  string,
  unknown
>
const GATEWAY_AUTH = basic('nextcloud-app', 'cidgravity-gateway-secret')

/**
 * The production setup against a CIDgravity-style gateway: FILESYNC=nextcloud,
 * GATEWAY_URL with its basic-auth account, the whole OCS route, one recorded
 * answer per quirk (file-metadata.test.ts covers the quirks one by one in
 * the embedded mode; this runs them end to end).
 */
describe('the OCS route against a recorded CIDgravity gateway', () => {
  let gateway: RunningServer
  let nextcloud: NextcloudStandIn
  let t: TestBridge
  const files = ['/Filecoin/partial.bin', '/Filecoin/packed.bin', '/Filecoin/summary', '/Filecoin/missing.txt']

  beforeAll(async () => {
    const app = express()
    app.use(express.json())
    app.post('/file-info', (req, res) => {
      if (req.headers.authorization !== GATEWAY_AUTH) return void res.status(401).json({ success: false, error: 'unauthorized' })
      // The real gateway answers 200 even for what it does not know.
      res.status(200).json(RECORDED[req.body?.filePath] ?? { success: false, error: 'file not found' })
    })
    gateway = await startServer(app, 0)
    nextcloud = await startNextcloudStandIn([{ ...NC_ALICE, files }, NC_ADMIN])
    t = await startBridge(gateway.url, {
      filesync: 'nextcloud',
      nextcloudUrl: nextcloud.url,
      gatewayUser: 'nextcloud-app',
      gatewayPassword: 'cidgravity-gateway-secret',
    })
    const saved = await fetch(`${t.url}/ocs/v2.php/apps/gateway/admin/settings`, {
      method: 'PUT',
      headers: { authorization: ncAdmin, 'ocs-apirequest': 'true', 'content-type': 'application/json' },
      body: JSON.stringify({
        gatewayUrl: '',
        gatewayUser: '',
        pathMap: '/{user}',
        network: 'mainnet',
        ipfsGateway: '',
        mounts: [{ mountPoint: '/Filecoin', gatewayPath: '/{user}' }],
      }),
    })
    expect(saved.status).toBe(200)
  })
  afterAll(async () => {
    await t.close()
    await nextcloud.close()
    await gateway.close(50)
  })
  const ask = (filePath: string) => postMetadata({ url: t.url, auth: ncAlice, body: { filePath } })

  it('reads "partially offloaded", "ready for deals" and numbers sent as strings', async () => {
    const res = await ask('/Filecoin/partial.bin')
    expect(res.status).toBe(200)
    expect(res.body.metadata.file).toMatchObject({ path: '/Filecoin', file: 'partial.bin' })
    expect(res.body.metadata.file.details).toMatchObject({
      state: 'Partially offloaded',
      retrievableCopies: 1,
      expirationEpoch: 4_600_000,
      expirationTimestamp: 1598306400 + 4_600_000 * 30,
      groups: [{ state: 'ready for deals', deals: [{ dealId: 81234567, endEpoch: 4_600_000 }] }],
    })
  })

  it('shows a group reported as "full" (its VRCARDone) as it is, with its piece CID', async () => {
    const res = await ask('/Filecoin/packed.bin')
    expect(res.status).toBe(200)
    expect(res.body.metadata.file.details).toMatchObject({
      state: 'Staging',
      retrievableCopies: 0,
      groups: [{ state: 'full', pieceCid: expect.stringMatching(/^baga6ea4seaq/) }],
    })
    expect(res.body.metadata.file.details.expirationEpoch).toBeUndefined()
  })

  it('takes the misspelt expriationEpoch/expriationTimestamp of a summary without groups', async () => {
    const res = await ask('/Filecoin/summary')
    expect(res.status).toBe(200)
    expect(res.body.metadata.file.details).toMatchObject({
      state: 'Offloaded',
      retrievableCopies: 2,
      expirationEpoch: 4_700_000,
      expirationTimestamp: 1598306400 + 4_700_000 * 30,
    })
    expect(res.body.metadata.file.details).not.toHaveProperty('expriationEpoch')
  })

  it('turns its 200 "file not found" into a 404', async () => {
    const res = await ask('/Filecoin/missing.txt')
    expect(res.status).toBe(404)
    expect(res.body).toMatchObject({ success: false })
  })

  it("passes the admin's link test, which has no POST /status to add anything from", async () => {
    const res = await fetch(`${t.url}/ocs/v2.php/apps/gateway/admin/test-link`, {
      method: 'POST',
      headers: { authorization: ncAdmin, 'ocs-apirequest': 'true', 'content-type': 'application/json' },
      body: '{}',
    })
    expect(res.status).toBe(200)
    const body = await res.json()
    // Its 200 "file not found" is the answer of a gateway; POST /status is Express's own 404 page there.
    expect(body).toMatchObject({ success: true, status: 200, message: 'The gateway answered and accepted the credentials' })
    for (const extra of ['warning', 'dealKind', 'dealsWarning', 'onchainCloud', 'dealMarket']) expect(body[extra]).toBeUndefined()
    const status = await fetch(`${gateway.url}/status`, { method: 'POST', headers: { authorization: GATEWAY_AUTH } })
    expect(status.status).toBe(404)
    expect(status.headers.get('content-type')).toMatch(/^text\/html/)
  })

  it('answers 502 when the gateway refuses the configured account', async () => {
    const wrong = await startBridge(gateway.url, {
      filesync: 'nextcloud',
      nextcloudUrl: nextcloud.url,
      gatewayUser: 'nextcloud-app',
      gatewayPassword: 'old-secret',
    })
    try {
      await fetch(`${wrong.url}/ocs/v2.php/apps/gateway/admin/settings`, {
        method: 'PUT',
        headers: { authorization: ncAdmin, 'ocs-apirequest': 'true', 'content-type': 'application/json' },
        body: JSON.stringify({
          gatewayUrl: '',
          gatewayUser: '',
          pathMap: '/{user}',
          network: 'mainnet',
          ipfsGateway: '',
          mounts: [{ mountPoint: '/Filecoin', gatewayPath: '/{user}' }],
        }),
      })
      const res = await postMetadata({ url: wrong.url, auth: ncAlice, body: { filePath: '/Filecoin/partial.bin' } })
      expect(res.status).toBe(502)
      expect(res.body).toMatchObject({ success: false })
    } finally {
      await wrong.close()
    }
  })
})
