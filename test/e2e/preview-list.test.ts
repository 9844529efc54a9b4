/**
 * The Files list's badges and file actions in a real browser: Debian's
 * chromium against the whole stack, on the preview page, which runs the
 * actions the built init script registers the way the Files app of
 * Nextcloud 33, 34 and 35 (`?nc=…`) does: from @nextcloud/files 4's registry
 * with one context object; 34 and 35 without the globals 34 removed (jQuery,
 * Backbone, OC.Notifications, OC.Dialogs.fileexists, OC.Files.Client). One
 * request per listing, whatever its size.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { copyBundle, ensureBundle, hasChromium, launchChromium, logInToPreview } from '../../scripts/lib/browser.ts'
import { basicAuth, startStack, type RunningStack } from '../../scripts/lib/stack.ts'
import { keepGroupWritable } from '../helpers/busy-group.ts'

const ROOT = join(import.meta.dirname, '..', '..')
const ARTIFACTS = join(ROOT, 'test', 'artifacts')
const ADMIN_PASSWORD = 'e2e-list-password'
const auth = basicAuth('admin', ADMIN_PASSWORD)
const FOLDER_STATES = '/ocs/v2.php/apps/gateway/get-folder-states'

describe.skipIf(!hasChromium())('the Files list in chromium', () => {
  let stack: RunningStack
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let dataDir: string
  const consoleErrors: string[] = []
  const folderStateRequests: string[] = []
  let busy: { stop(): Promise<void> } | undefined

  const dav = async (method: string, path: string, body?: string) => {
    const res = await fetch(`${stack.appUrl}/remote.php/dav/files/admin${path}`, { method, headers: { authorization: auth }, body })
    expect(res.status).toBe(201)
  }
  const ocs = async (route: string, body: unknown) => {
    const res = await fetch(`${stack.appUrl}/ocs/v2.php/apps/gateway/${route}`, {
      method: 'POST',
      headers: { authorization: auth, 'ocs-apirequest': 'true', 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    return res.json()
  }
  const row = (name: string) => page.locator(`[data-test="file-row"][data-path="/docs/${name}"]`)
  const badge = (name: string) => row(name).locator('[data-gateway-badge]')
  /** Opens /docs (again) and waits for its rows. */
  const openDocs = async (query = '') => {
    await page.goto(`${stack.appUrl}/?dir=/docs${query}`)
    await row('a.txt').waitFor()
  }
  /**
   * The Files app asks an action whether it applies once, when it draws the row, which may be before the
   * folder's answer came: back in the folder (within the answer's few seconds), the menu knows.
   */
  const revisitDocs = async () => {
    await page.getByRole('link', { name: 'All files' }).click()
    await page.locator('[data-test="file-row"][data-path="/docs"] button.preview-files__name').click()
    await badge('a.txt').waitFor()
  }
  const menuItems = async (name: string) => {
    await row(name).getByTestId('row-actions').click()
    const items = await page.getByTestId('row-menu').getByRole('menuitem').allTextContents()
    await page.keyboard.press('Escape')
    return items
  }

  beforeAll(async () => {
    ensureBundle()
    dataDir = mkdtempSync(join(tmpdir(), 'e2e-list-'))
    const bundleDir = join(dataDir, 'bundle')
    await copyBundle(bundleDir)
    mkdirSync(ARTIFACTS, { recursive: true })
    stack = await startStack({ DATA_DIR: join(dataDir, 'data'), ADMIN_PASSWORD, GROUP_IDLE_SECONDS: '1', BUNDLE_DIR: bundleDir })
    // The files stay staging until the last test lets their group go idle.
    busy = await keepGroupWritable(stack.appUrl, auth)
    await dav('MKCOL', '/docs')
    await dav('MKCOL', '/docs/sub')
    for (const name of ['a.txt', 'b.txt', 'c.txt']) await dav('PUT', `/docs/${name}`, `the file ${name}\n`.repeat(40))
    await dav('PUT', '/docs/sub/d.txt', 'below\n')
    browser = await launchChromium()
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.appUrl })
    page = await context.newPage()
    page.on('console', (msg) => {
      if (msg.type() === 'error') consoleErrors.push(`${msg.text()} (${msg.location().url})`)
    })
    page.on('pageerror', (err) => consoleErrors.push(err.message))
    page.on('request', (req) => {
      if (new URL(req.url()).pathname === FOLDER_STATES) folderStateRequests.push(req.postData() ?? '')
    })
    await logInToPreview(page, stack.appUrl, 'admin', ADMIN_PASSWORD)
    // The landing listing's own request, which a loaded machine may send late, is not counted as the first test's.
    await vi.waitFor(() => expect(folderStateRequests.map((r) => JSON.parse(r).folderPath)).toContain('/'), {
      timeout: 30_000,
      interval: 100,
    })
  }, 120_000)

  afterAll(async () => {
    await busy?.stop()
    await browser?.close()
    await stack?.stop()
    rmSync(dataDir, { recursive: true, force: true })
  })

  for (const nc of ['33', '34', '35'] as const) {
    const query = `&nc=${nc}`

    it(`Nextcloud ${nc}: the page is that release's, and the app reaches for none of the globals 34 removed`, async () => {
      await openDocs(query)
      await badge('a.txt').waitFor()
      const page_ = await page.evaluate(() => {
        const w = window as unknown as Record<string, unknown> & { OC: Record<string, unknown> & { config: { version: string } } }
        return {
          version: w.OC.config.version,
          jQuery: typeof w.jQuery,
          notifications: typeof w.OC.Notifications,
          used: w._previewRemovedGlobalsUsed,
        }
      })
      expect(page_.version.split('.')[0]).toBe(nc)
      // 33 still has them (deprecated); 34 and 35 do not.
      expect(page_.jQuery).toBe(nc === '33' ? 'function' : 'undefined')
      expect(page_.notifications).toBe(nc === '33' ? 'object' : 'undefined')
      expect(page_.used).toEqual([])
      expect(consoleErrors).toEqual([])
    }, 60_000)

    it(`Nextcloud ${nc}: badges every entry from one request, with the state in words as its tooltip`, async () => {
      folderStateRequests.length = 0
      await openDocs(query)
      await expect.poll(() => page.locator('[data-gateway-badge]').count(), { timeout: 15_000 }).toBe(4)
      // The rows shown, asked by name together (those rendered in one pass share a request): not the whole folder, not one per row.
      const asked = folderStateRequests.map((r) => JSON.parse(r) as { folderPath: string; names?: string[] })
      expect(asked.every((r) => r.folderPath === '/docs' && r.names)).toBe(true)
      expect(asked.length).toBeLessThan(4)
      expect(new Set(asked.flatMap((r) => r.names!))).toEqual(new Set(['a.txt', 'b.txt', 'c.txt', 'sub']))
      for (const name of ['a.txt', 'b.txt', 'c.txt', 'sub']) {
        expect(await badge(name).getAttribute('data-gateway-badge')).toBe('staging')
        expect(await badge(name).getAttribute('title')).toBe('Filecoin: staging, waiting to be packed and sent')
      }
      // Its accessible name is the same words.
      expect(await page.getByRole('img', { name: 'Filecoin: staging, waiting to be packed and sent' }).count()).toBe(4)
    }, 60_000)

    it(`Nextcloud ${nc}: "Copy CID" copies the file's CID; "Open on IPFS" is not offered on the simulated network`, async () => {
      await openDocs(query)
      await badge('a.txt').waitFor()
      const items = await menuItems('a.txt')
      expect(items).toEqual(expect.arrayContaining(['Copy CID', 'Why is this not stored yet?']))
      expect(items).not.toContain('Open on IPFS')
      await row('a.txt').getByTestId('row-actions').click()
      await page.getByRole('menuitem', { name: 'Copy CID' }).click()
      const cid = (await ocs('get-file-metadata', { filePath: '/docs/a.txt' })).metadata.file.cid
      await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(cid)
    }, 60_000)

    it(`Nextcloud ${nc}: "Why is this not stored yet?" opens the Filecoin tab with the reason in view`, async () => {
      await openDocs(query)
      await badge('b.txt').waitFor()
      await row('b.txt').getByTestId('row-actions').click()
      await page.getByRole('menuitem', { name: 'Why is this not stored yet?' }).click()
      const tab = page.locator('#app-sidebar')
      await tab.getByTestId('record').waitFor({ timeout: 15_000 })
      expect(await page.getByTestId('sidebar-title').textContent()).toBe('b.txt')
      const reason = tab.getByTestId('group-reason').first()
      await expect.poll(() => reason.evaluate((el) => el === document.activeElement)).toBe(true)
      expect(await reason.textContent()).toMatch(/waiting for more data/)
    }, 60_000)
  }

  it('turns the badges to stored once offloaded, offers "Open on IPFS" where the network publishes data, in light and dark', async () => {
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme })
      await openDocs()
      await badge('a.txt').waitFor()
      await page.locator('main').screenshot({ path: join(ARTIFACTS, `files-list-staging-${colorScheme}.png`) })
    }
    await busy!.stop()
    // The group goes idle, is sealed and stored by the simulated providers; each listing asks again.
    await expect
      .poll(
        async () => {
          await openDocs()
          await badge('a.txt').waitFor()
          return badge('a.txt').getAttribute('data-gateway-badge')
        },
        { timeout: 150_000, interval: 3_000 },
      )
      .toBe('stored')
    expect(await badge('a.txt').getAttribute('title')).toMatch(/^Filecoin: stored \(\d+ cop(y|ies)\)$/)
    await revisitDocs()
    expect(await menuItems('a.txt')).not.toContain('Why is this not stored yet?')
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme })
      await page.locator('main').screenshot({ path: join(ARTIFACTS, `files-list-stored-${colorScheme}.png`) })
    }
    await page.emulateMedia({ colorScheme: 'light' })

    // A gateway on mainnet, whose providers publish what they store, answers with its IPFS gateway; the network is the
    // gateway's word (the simulated one says simnet whatever the admin setting), so its answer is made mainnet's here.
    await context.route('**/ocs/v2.php/apps/gateway/get-folder-states', async (route) => {
      const res = await route.fetch()
      const body = await res.json()
      body.folder.ipfsGateway = 'https://ipfs.io'
      await route.fulfill({ response: res, json: body })
    })
    await context.route('https://ipfs.io/**', (route) => route.fulfill({ status: 200, contentType: 'text/plain', body: 'ipfs' }))
    await openDocs()
    await revisitDocs()
    await row('a.txt').getByTestId('row-actions').click()
    await page.locator('main').screenshot({ path: join(ARTIFACTS, 'files-list-menu.png') })
    const popup = context.waitForEvent('page')
    await page.getByRole('menuitem', { name: 'Open on IPFS' }).click()
    const cid = (await ocs('get-file-metadata', { filePath: '/docs/a.txt' })).metadata.file.cid
    expect((await popup).url()).toBe(`https://ipfs.io/ipfs/${cid}`)
    expect(consoleErrors).toEqual([])
  }, 240_000)
})
