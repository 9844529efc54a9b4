import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { basicAuth, startStack, type RunningStack } from '../../scripts/lib/stack.ts'

const PASSWORD = 'pdp-e2e-password-1'

/**
 * The stack as `npm start` runs it, with its simulated Onchain Cloud on (the
 * other e2e stacks run without it, to keep the machine free): a small file
 * dropped over the app's WebDAV becomes two proved PDP copies, shown by the
 * OCS route with their data sets and proof times. Every part talks to the
 * others over HTTP, the gateway to the simulated FOC through the unchanged SDK.
 */
describe('npm start stores a file on the simulated Onchain Cloud', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'pdp-stack-'))
  let stack: RunningStack | undefined
  afterAll(async () => {
    if (stack?.child.exitCode === null) await stack.stop()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it("shows hello.txt's two proved PDP copies in the file record, with what the tab says of them", async () => {
    stack = await startStack(
      { DATA_DIR: dataDir, ADMIN_PASSWORD: PASSWORD, GROUP_IDLE_SECONDS: '1', SIMFOC_PROVIDERS: '2', PDP_COPIES: '2' },
      [],
      undefined,
      { readyTimeoutMs: 120_000 },
    )
    const s = stack
    const put = await fetch(`${s.appUrl}/remote.php/dav/files/admin/hello.txt`, {
      method: 'PUT',
      headers: { authorization: basicAuth('admin', PASSWORD) },
      body: 'Hello, Filecoin',
    })
    expect(put.status).toBe(201)
    const metadata = async () => {
      const res = await fetch(`${s.appUrl}/ocs/v2.php/apps/gateway/get-file-metadata`, {
        method: 'POST',
        headers: { authorization: basicAuth('admin', PASSWORD), 'ocs-apirequest': 'true', 'content-type': 'application/json' },
        body: JSON.stringify({ filePath: '/hello.txt' }),
      })
      return (await res.json()) as any
    }
    const started = Date.now()
    const reasons = new Set<string>()
    let proved: any[] = []
    while (Date.now() - started < 170_000) {
      const group = (await metadata()).metadata?.file?.details?.groups?.[0]
      if (group?.reason) reasons.add(group.reason)
      proved = (group?.deals ?? []).filter((d: any) => d.route === 'pdp' && d.state === 'active')
      if (proved.length === 2) break
      await new Promise((r) => setTimeout(r, 1000))
    }
    // Under 3 minutes from the upload, as the issue asks of `npm start`'s defaults.
    if (proved.length !== 2)
      console.log(
        [...reasons].join('\n'),
        s
          .output()
          .split('\n')
          .filter((l) => /"level":(40|50)|PDP|group/.test(l))
          .join('\n'),
      )
    expect(proved).toHaveLength(2)
    for (const copy of proved) {
      expect(copy.provider).toMatch(/^pdp:\d+$/)
      expect(copy.dataSetId).toBe(copy.dealId)
      // The bridge turns the proof's epoch into a time on the simulated network's clock: just now.
      expect(Math.abs(copy.lastProofTimestamp - Date.now() / 1000)).toBeLessThan(300)
    }
    expect(
      [...reasons].some((r) =>
        /PDP cop(y|ies) proved|committed on chain|waiting for the piece to be added on chain|uploading to 2 providers/.test(r),
      ),
    ).toBe(true)
    expect(s.output()).toMatch(/PDP copies on Filecoin Onchain Cloud, paid by the wallet key/)
    expect(s.output()).toMatch(/deposited USDFC into Filecoin Pay for PDP uploads/)
    expect(await s.stop()).toBe(0)
  }, 300_000)
})
