import { pino } from 'pino'
import type { BridgeConfig } from '../../server/shared/config.ts'
import type { BridgeDeps } from '../../server/bridge/index.ts'
import { basic, RECORDED_FILE_INFO, startBridge, startFakeGateway } from './helpers.ts'
import { startNextcloudStandIn, type StandInUser } from './nextcloud-stand-in.ts'

export const NC_ALICE: StandInUser = {
  id: 'alice',
  password: 'alice-nextcloud-pw',
  displayName: 'Alice Liddell',
  groups: ['users'],
  files: ['/Filecoin/docs/report.pdf', '/Team/plan.txt', '/Documents/private.txt'],
}
export const NC_BOB: StandInUser = {
  id: 'bob',
  password: 'bob-nextcloud-pw',
  displayName: 'Bob',
  groups: ['users'],
  files: ['/Filecoin/bob-only.txt'],
}
export const NC_ADMIN: StandInUser = {
  id: 'ncadmin',
  password: 'admin-nextcloud-pw',
  displayName: 'Admin',
  groups: ['admin', 'users'],
  files: [],
}
export const ncAlice = basic(NC_ALICE.id, NC_ALICE.password)
export const ncAdmin = basic(NC_ADMIN.id, NC_ADMIN.password)

/** The External Storage mounts the tests map: a per-user folder and one shared folder. */
export const MOUNTS = [
  { mountPoint: '/Filecoin', gatewayPath: '/{user}' },
  { mountPoint: '/Team', gatewayPath: '/shared' },
]

/** A pino logger whose lines the test can read (what was logged, and that no secret was). */
export function captureLogger() {
  const lines: string[] = []
  const logger = pino(
    {
      level: 'info',
      redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'password', '*.password'], censor: '[redacted]' },
    },
    { write: (line: string) => void lines.push(line) },
  )
  return { logger, lines }
}

/**
 * A bridge with FILESYNC=nextcloud in front of the Nextcloud stand-in and a
 * recorded gateway, with the mounts above saved through the admin API by a
 * Nextcloud admin.
 */
export async function startNextcloudSetup(config: Partial<BridgeConfig> = {}, deps: Partial<BridgeDeps> = {}) {
  const nextcloud = await startNextcloudStandIn([NC_ALICE, NC_BOB, NC_ADMIN])
  const gateway = await startFakeGateway((app) => {
    app.post('/file-info', (req, res) => {
      const path = req.body?.filePath
      if (['/alice/docs/report.pdf', '/alice', '/shared/plan.txt', '/bob/bob-only.txt'].includes(path)) res.json(RECORDED_FILE_INFO)
      else res.status(404).json({ success: false, error: 'File or folder not found' })
    })
  })
  const t = await startBridge(
    gateway.url,
    { filesync: 'nextcloud', nextcloudUrl: nextcloud.url, nextcloudTimeoutMs: 2_000, ...config },
    deps,
  )
  const saved = await fetch(`${t.url}/ocs/v2.php/apps/gateway/admin/settings`, {
    method: 'PUT',
    headers: { authorization: ncAdmin, 'ocs-apirequest': 'true', 'content-type': 'application/json' },
    body: JSON.stringify({
      gatewayUrl: '',
      gatewayUser: '',
      pathMap: '/{user}',
      network: 'mainnet',
      ipfsGateway: 'https://ipfs.io',
      mounts: MOUNTS,
    }),
  })
  if (saved.status !== 200) throw new Error(`saving the mounts failed: ${saved.status} ${await saved.text()}`)
  return {
    ...t,
    nextcloud,
    gateway,
    /** cloud/user calls the stand-in received. */
    userChecks: () => nextcloud.seen.filter((r) => r.url.startsWith('/ocs/v2.php/cloud/user')).length,
    async close() {
      await t.close()
      await gateway.close()
      await nextcloud.close()
    },
  }
}
