/**
 * The PDP route as a user sees it: `npm start`'s stack with its simulated
 * Onchain Cloud on, the README's 15-byte upload, and the tab in chromium
 * until the file shows a proved PDP copy ("proved today at …") and then
 * reaches Offloaded by the policy (2 PDP copies and the deal market's); then
 * a 200 MiB file (four 64 MiB groups) the same way. A screenshot of the
 * proved copy goes to test/artifacts/pdp-proved.png.
 */
import { createHash, randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { afterAll, describe, expect, it } from 'vitest'
import { copyBundle, ensureBundle, hasChromium, launchChromium, logInToPreview, openInSidebar } from '../../scripts/lib/browser.ts'
import { basicAuth, startStack, type RunningStack } from '../../scripts/lib/stack.ts'

const ARTIFACTS = join(import.meta.dirname, '..', 'artifacts')
const THREE_MINUTES = 3 * 60_000
const SIX_MINUTES = 6 * 60_000
const MiB = 1024 * 1024

describe.skipIf(!hasChromium())('a PDP copy in the tab (npm start with the simulated Onchain Cloud) in chromium', () => {
  let stack: RunningStack | undefined
  let browser: Browser | undefined
  let dir: string | undefined

  afterAll(async () => {
    await browser?.close()
    await stack?.stop()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it(
    'shows hello.txt proved by a PDP provider within 3 minutes, then Offloaded; then a 200 MiB file Offloaded with its proved copies',
    async () => {
      ensureBundle()
      dir = mkdtempSync(join(tmpdir(), 'e2e-pdp-'))
      const dataDir = join(dir, 'data')
      const bundleDir = join(dir, 'bundle')
      await copyBundle(bundleDir)
      mkdirSync(ARTIFACTS, { recursive: true })
      // Two simulated PDP providers (npm start runs three): the copies the policy wants, and a lighter machine.
      stack = await startStack({ DATA_DIR: dataDir, BUNDLE_DIR: bundleDir, SIMFOC_PROVIDERS: '2' }, [], undefined, {
        readyTimeoutMs: 120_000,
      })
      const password = readFileSync(join(dataDir, 'app', 'admin-password'), 'utf8').trim()
      const upload = await fetch(`${stack.appUrl}/remote.php/dav/files/admin/hello.txt`, {
        method: 'PUT',
        headers: { authorization: basicAuth('admin', password) },
        body: 'hello filecoin\n',
      })
      expect(upload.status).toBe(201)
      const uploadedAt = Date.now()

      browser = await launchChromium()
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
      const errors: string[] = []
      page.on('pageerror', (err) => errors.push(err.message))
      await logInToPreview(page, stack.appUrl, 'admin', password)
      const tab = await openInSidebar(page, '/hello.txt')

      // The tab refreshes by itself; its group is opened once it has one, and stays open.
      let proof = ''
      while (Date.now() - uploadedAt < THREE_MINUTES) {
        const details = tab.locator('[data-test="group"] details').first()
        if ((await details.count()) > 0 && !(await details.evaluate((d) => (d as HTMLDetailsElement).open)))
          await tab.getByTestId('group-summary').first().click()
        // A committed copy's line says when its first proof is due; a proved one's, when it was proved.
        const proofs = tab.locator('[data-test="pdp-proof"] time', { hasText: /^proved/ })
        if ((await proofs.count()) > 0) {
          proof = (await proofs.first().textContent()) ?? ''
          break
        }
        await page.waitForTimeout(1000)
      }
      expect(proof).toMatch(/^proved (today|yesterday) at \d{1,2}:\d{2}/)
      const copy = tab.locator('[data-test="deal"]', { has: page.locator('[data-test="pdp-proof"] time', { hasText: /^proved/ }) }).first()
      expect(await copy.getByTestId('provider').textContent()).toMatch(/^PDP provider \d+$/)
      expect(await copy.getByTestId('pdp-copy').textContent()).toMatch(/^\s*data set \d+, piece \d+\s*·\s*Proved\s*$/)
      await copy.screenshot({ path: join(ARTIFACTS, 'pdp-proved.png') })

      // Then Offloaded: both routes' copies retrievable.
      const offloaded = async (deadline: number) => {
        let state = ''
        while (Date.now() < deadline) {
          state = (await tab.getByTestId('state-label').textContent())?.trim() ?? ''
          if (state === 'Offloaded') break
          await page.waitForTimeout(1000)
        }
        return state
      }
      expect(await offloaded(uploadedAt + SIX_MINUTES)).toBe('Offloaded')
      const read = await fetch(`${stack.appUrl}/remote.php/dav/files/admin/hello.txt`, {
        headers: { authorization: basicAuth('admin', password) },
      })
      expect(await read.text()).toBe('hello filecoin\n')

      // A 200 MiB file: four groups, each with its two proved PDP copies and the market's deals, then read back whole.
      const big = randomBytes(200 * MiB)
      const bigUpload = await fetch(`${stack.appUrl}/remote.php/dav/files/admin/big.bin`, {
        method: 'PUT',
        headers: { authorization: basicAuth('admin', password) },
        body: big,
      })
      expect(bigUpload.status).toBe(201)
      const bigUploadedAt = Date.now()
      await page.reload()
      await openInSidebar(page, '/big.bin')
      expect(await offloaded(bigUploadedAt + SIX_MINUTES)).toBe('Offloaded')
      expect(await tab.locator('[data-test="group"]').count()).toBe(4)
      const bigProofs = await tab.locator('[data-test="pdp-proof"] time').allTextContents()
      expect(bigProofs.length).toBeGreaterThanOrEqual(8)
      for (const p of bigProofs) expect(p).toMatch(/^proved (today|yesterday) at \d{1,2}:\d{2}/)
      const bigRead = await fetch(`${stack.appUrl}/remote.php/dav/files/admin/big.bin`, {
        headers: { authorization: basicAuth('admin', password) },
      })
      const digest = (b: Uint8Array) => createHash('sha256').update(b).digest('hex')
      expect(digest(new Uint8Array(await bigRead.arrayBuffer()))).toBe(digest(big))
      expect(errors).toEqual([])
    },
    2 * SIX_MINUTES + 240_000,
  )
})
