/**
 * A newcomer's first five minutes: `npm start` with none of the stack's
 * variables (only free ports and a fresh DATA_DIR, so tests do not collide),
 * the README's 15-byte upload, and the tab in chromium until the file is
 * Offloaded: every step on the simulated network's real code path (deal
 * service, CAR transfer over HTTP, padded pieces, sealing in simulated time,
 * retrieval checks). Screenshots of each state, light and dark, go to
 * test/artifacts/first-run-<state>-<scheme>.png.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { afterAll, describe, expect, it } from 'vitest'
import { copyBundle, ensureBundle, hasChromium, launchChromium, logInToPreview, openInSidebar } from '../../scripts/lib/browser.ts'
import { basicAuth, startStack, type RunningStack } from '../../scripts/lib/stack.ts'

const ARTIFACTS = join(import.meta.dirname, '..', 'artifacts')
const FIVE_MINUTES = 5 * 60_000

describe.skipIf(!hasChromium())('first run (npm start defaults) in chromium', () => {
  let stack: RunningStack | undefined
  let browser: Browser | undefined
  let dir: string | undefined

  afterAll(async () => {
    await browser?.close()
    await stack?.stop()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it(
    'takes a 15-byte file from upload to Offloaded within 5 minutes, the tab showing each state',
    async () => {
      ensureBundle()
      dir = mkdtempSync(join(tmpdir(), 'e2e-first-run-'))
      const dataDir = join(dir, 'data')
      const bundleDir = join(dir, 'bundle')
      await copyBundle(bundleDir)
      mkdirSync(ARTIFACTS, { recursive: true })
      // Unset: the ticker and log level the test helper otherwise pins; BUNDLE_DIR only shields the page from a rebuild by another test.
      stack = await startStack({ DATA_DIR: dataDir, BUNDLE_DIR: bundleDir, TICKER_ENABLED: undefined, LOG_LEVEL: undefined })
      const running = stack
      await expect.poll(() => running.output()).toContain('simulated network, 1 minute ≈ 5 hours')

      // The password the banner points to.
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
      expect(await page.getByTestId('network').textContent()).toBe('Simulated network, 1 minute ≈ 5 hours')
      const tab = await openInSidebar(page, '/hello.txt')
      expect(await tab.getByTestId('simnet-note').textContent()).toContain('1 minute ≈ 5 hours')

      // Follow the tab as it refreshes by itself; each new state is photographed in both schemes.
      const seen: string[] = []
      while (Date.now() - uploadedAt < FIVE_MINUTES) {
        const state = (await tab.getByTestId('state-label').textContent())?.trim() ?? ''
        if (state && state !== seen.at(-1)) {
          seen.push(state)
          for (const colorScheme of ['light', 'dark'] as const) {
            await page.emulateMedia({ colorScheme })
            await tab.screenshot({ path: join(ARTIFACTS, `first-run-${state.toLowerCase().replace(/\s+/g, '-')}-${colorScheme}.png`) })
          }
          await page.emulateMedia({ colorScheme: 'light' })
        }
        if (state === 'Offloaded') break
        await page.waitForTimeout(1000)
      }
      expect(seen.at(-1), `states seen: ${seen.join(' → ')}`).toBe('Offloaded')
      expect(seen[0]).toBe('Staging')
      expect(seen).toContain('Offloading')

      // Offloaded means copies a user can count on: three retrievable ones, an expiry in the (simulated) future.
      expect(await tab.getByTestId('copies').textContent()).toContain('3 copies')
      expect(await tab.getByTestId('expiration').locator('time').count()).toBe(1)
      // Three copies fit a 750 px high window without scrolling, the sidebar or the page: groups and deals are one line each.
      await page.setViewportSize({ width: 1280, height: 750 })
      const fits = await tab.evaluate((sidebar) => ({
        sidebar: sidebar.scrollHeight <= sidebar.clientHeight + 1 && sidebar.getBoundingClientRect().bottom <= 751,
        page: document.documentElement.scrollHeight <= 751,
      }))
      expect(fits).toEqual({ sidebar: true, page: true })
      await tab.screenshot({ path: join(ARTIFACTS, 'first-run-offloaded-750px.png') })

      // The bytes now come back from the simulated providers.
      const read = await fetch(`${stack.appUrl}/remote.php/dav/files/admin/hello.txt`, {
        headers: { authorization: basicAuth('admin', password) },
      })
      expect(await read.text()).toBe('hello filecoin\n')
      expect(errors).toEqual([])
    },
    FIVE_MINUTES + 120_000,
  )
})
