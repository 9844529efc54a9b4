/**
 * The real tab in a real browser: Debian's chromium driven by playwright-core
 * against the whole stack (`server/main.ts`), through the preview page that
 * hosts the same built bundle Nextcloud loads.
 */
import { randomBytes } from 'node:crypto'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { copyBundle, ensureBundle, hasChromium, launchChromium, logInToPreview, openInSidebar } from '../../scripts/lib/browser.ts'
import { basicAuth, startStack, type RunningStack } from '../../scripts/lib/stack.ts'
import { keepGroupWritable } from '../helpers/busy-group.ts'

const ROOT = join(import.meta.dirname, '..', '..')
const ARTIFACTS = join(ROOT, 'test', 'artifacts')
const ADMIN_PASSWORD = 'e2e-admin-password'
const auth = basicAuth('admin', ADMIN_PASSWORD)

if (!hasChromium()) console.warn('Skipping browser tests: /usr/bin/chromium is missing (Debian package "chromium"; .ci/run installs it)')

async function davPut(stack: RunningStack, path: string, body: string | Uint8Array<ArrayBuffer>): Promise<number> {
  const res = await fetch(`${stack.appUrl}/remote.php/dav/files/admin${path}`, { method: 'PUT', headers: { authorization: auth }, body })
  return res.status
}

/** The files page, logging in first if this page has no session yet (a test run on its own with -t). */
async function openFilesPage(page: Page, appUrl: string): Promise<void> {
  await page.goto(`${appUrl}/`)
  if (await page.getByLabel('Password').count()) await logInToPreview(page, appUrl, 'admin', ADMIN_PASSWORD)
}

/** Opens a file of the current folder in the sidebar and waits for its record. */
async function openFile(page: Page, name: string): Promise<void> {
  await page.getByRole('link', { name: 'All files' }).click()
  await openInSidebar(page, `/${name}`)
}

describe.skipIf(!hasChromium())('preview page in chromium', () => {
  let stack: RunningStack
  let browser: Browser
  let page: Page
  let dataDir: string
  let bundleDir: string
  const consoleErrors: string[] = []
  let busy: { stop(): Promise<void> } | undefined

  beforeAll(async () => {
    ensureBundle()
    dataDir = mkdtempSync(join(tmpdir(), 'e2e-preview-'))
    bundleDir = join(dataDir, 'bundle')
    await copyBundle(bundleDir)
    mkdirSync(ARTIFACTS, { recursive: true })
    // Groups of 4 MiB: a 13 MB file spans several groups (1 MiB chunks, three to a group), as a big file does on a real network.
    stack = await startStack({
      DATA_DIR: join(dataDir, 'data'),
      ADMIN_PASSWORD,
      GROUP_IDLE_SECONDS: '1',
      GROUP_SIZE: String(4 * 1024 * 1024),
      BUNDLE_DIR: bundleDir,
    })
    browser = await launchChromium()
    page = await browser.newPage({ viewport: { width: 1280, height: 1100 } })
    page.on('console', (msg) => {
      if (msg.type() === 'error') consoleErrors.push(`${msg.text()} (${msg.location().url})`)
    })
    page.on('pageerror', (err) => consoleErrors.push(err.message))
  }, 120_000)

  afterAll(async () => {
    await busy?.stop()
    await browser?.close()
    await stack?.stop()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('logs in, opens an uploaded file and shows its CID and state, then the state moves on', async () => {
    // The file is still staging when the tab first shows it.
    busy = await keepGroupWritable(stack.appUrl, auth)
    const report = 'Filecoin preview page report. '.repeat(2200)
    expect(await davPut(stack, '/report.txt', report)).toBe(201)

    await logInToPreview(page, stack.appUrl, 'admin', ADMIN_PASSWORD)
    await openFile(page, 'report.txt')
    const tab = page.locator('#app-sidebar')
    await expect.poll(() => tab.getByTestId('state-label').textContent()).toBe('Staging')
    const cid = await tab.getByTestId('cid-full').textContent()
    // The same CID the OCS route gives an API client for this file.
    const api = await fetch(`${stack.appUrl}/ocs/v2.php/apps/gateway/get-file-metadata`, {
      method: 'POST',
      headers: { authorization: auth, 'ocs-apirequest': 'true', 'content-type': 'application/json' },
      body: JSON.stringify({ filePath: '/report.txt' }),
    })
    expect(cid).toMatch(/^baf[a-z2-7]{50,}$/)
    expect(cid).toBe((await api.json()).metadata.file.cid)
    // Nextcloud's clickable size: the copy button is at least 34 px each way.
    const copyBox = await tab.getByTestId('copy').first().boundingBox()
    expect(Math.min(copyBox!.width, copyBox!.height)).toBeGreaterThanOrEqual(34)
    await tab.screenshot({ path: join(ARTIFACTS, 'gateway-tab-staging.png') })

    // Let the group go idle: it is sealed, gets its CAR and piece CID and is ready for deals.
    await busy.stop()
    await expect.poll(() => tab.getByTestId('state-label').textContent(), { timeout: 45_000, interval: 500 }).not.toBe('Staging')
    expect(['Offloading', 'Partially offloaded', 'Offloaded']).toContain(await tab.getByTestId('state-label').textContent())
    await expect.poll(() => tab.getByTestId('group').count()).toBeGreaterThan(0)
    // Each group is one summary line until clicked; then its piece CID shows.
    const firstGroup = tab.getByTestId('group').first()
    expect(await firstGroup.locator('[data-test="group-copies"]').isVisible()).toBe(false)
    await firstGroup.getByTestId('group-summary').click()
    await expect.poll(() => firstGroup.locator('[data-test="group-copies"]').isVisible()).toBe(true)

    // Once deals are proposed they show end dates: on the simulated network those are the sped-up
    // chain's (a 540-day deal ends in about 2 days of wall-clock time), never dates years ahead, and the page
    // and the tab both say the network is simulated.
    const ends = firstGroup.locator('[data-test="deal-end"] time')
    await expect.poll(() => ends.count(), { timeout: 30_000, interval: 500 }).toBeGreaterThan(0)
    for (const datetime of await ends.evaluateAll((times) => times.map((time) => time.getAttribute('datetime')!))) {
      expect(Date.parse(datetime) - Date.now()).toBeGreaterThan(0)
      expect(Date.parse(datetime) - Date.now()).toBeLessThan(7 * 24 * 3600_000)
    }
    expect(await page.getByTestId('network').textContent()).toMatch(/^Simulated network/)
    expect(await tab.getByTestId('simnet-note').isVisible()).toBe(true)

    // Tall enough for the whole record with three deals, so the picture cuts nothing off.
    await page.setViewportSize({ width: 1280, height: 1250 })
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme })
      await tab.screenshot({ path: join(ARTIFACTS, `gateway-tab-${colorScheme}.png`) })
      await page.screenshot({ path: join(ARTIFACTS, `preview-page-${colorScheme}.png`) })
    }
    await page.setViewportSize({ width: 1280, height: 1100 })
    // The README's picture, renewed only on request so that a test run never changes docs/:
    // `UPDATE_DOCS_SCREENSHOT=1 npx vitest run test/e2e/preview-browser.test.ts`.
    if (process.env.UPDATE_DOCS_SCREENSHOT === '1')
      cpSync(join(ARTIFACTS, 'preview-page-light.png'), join(ROOT, 'docs', 'preview-page.png'))
    await page.emulateMedia({ colorScheme: 'light' })
    expect(consoleErrors).toEqual([])
  }, 120_000)

  it("shows a folder's aggregate record, then closes the sidebar", async () => {
    await page.getByRole('link', { name: 'All files' }).click()
    await page.getByTestId('folder-details').click()
    const tab = page.locator('#app-sidebar')
    await tab.getByTestId('record').waitFor()
    expect(await tab.getByTestId('kind').textContent()).toContain('Folder')
    await page.getByRole('button', { name: 'Close sidebar' }).click()
    expect(await tab.isHidden()).toBe(true)
  }, 60_000)

  it('shows a file named with a percent escape its own record, not the file the escape spells', async () => {
    expect(await davPut(stack, '/100%2541.txt', 'the file named 100%41.txt')).toBe(201)
    expect(await davPut(stack, '/100A.txt', 'the file named 100A.txt')).toBe(201)
    expect(await davPut(stack, `/${encodeURIComponent('Cafe\u0301.txt')}`, 'a name sent in NFD')).toBe(201)
    const cidOf = async (filePath: string) => {
      const res = await fetch(`${stack.appUrl}/ocs/v2.php/apps/gateway/get-file-metadata`, {
        method: 'POST',
        headers: { authorization: auth, 'ocs-apirequest': 'true', 'content-type': 'application/json' },
        body: JSON.stringify({ filePath }),
      })
      return (await res.json()).metadata.file.cid as string
    }
    const tab = page.locator('#app-sidebar')
    // The file's own CID field comes first; a group sealed meanwhile (a loaded machine's timing) adds its piece CID below.
    const fileCid = () => tab.getByTestId('cid-full').first().textContent()
    const ownCid = await cidOf('/100%41.txt')
    expect(ownCid).not.toBe(await cidOf('/100A.txt'))
    await openFile(page, '100%41.txt')
    await expect.poll(fileCid).toBe(ownCid)
    // Listed in NFC, as Nextcloud stores names.
    const cafeCid = await cidOf('/Caf\u00e9.txt')
    await openFile(page, 'Caf\u00e9.txt')
    await expect.poll(fileCid).toBe(cafeCid)
  }, 60_000)

  it('never makes the page taller than the window, for a file in many groups and for "All files" with every group open', async () => {
    // Random bytes: repeated text would give repeated 1 MiB blocks, stored once, in fewer groups.
    expect(await davPut(stack, '/video.bin', new Uint8Array(randomBytes(13_000_000)))).toBe(201)
    const tab = page.locator('#app-sidebar')
    // The page's own height, how much of it scrolls, and the tab's scroll position at its end.
    const pageHeight = () =>
      page.evaluate(() => {
        const panels = document.getElementById('app-sidebar')!
        panels.scrollTop = panels.scrollHeight
        return { scrollHeight: document.documentElement.scrollHeight, innerHeight: window.innerHeight }
      })
    const openEveryGroup = async () => {
      for (const summary of await tab.getByTestId('group-summary').all()) await summary.click()
    }
    await openFilesPage(page, stack.appUrl)
    await openFile(page, 'video.bin')
    await expect.poll(() => tab.getByTestId('group').count(), { timeout: 30_000 }).toBeGreaterThanOrEqual(4)
    const file = await pageHeight()
    await openEveryGroup()
    const fileOpen = await pageHeight()
    await page.getByRole('link', { name: 'All files' }).click()
    await page.getByTestId('folder-details').click()
    await tab.getByTestId('record').waitFor()
    await expect.poll(() => tab.getByTestId('group').count()).toBeGreaterThanOrEqual(4)
    const folder = await pageHeight()
    await openEveryGroup()
    const folderOpen = await pageHeight()
    // Hidden text (the full CIDs kept for screen readers and copying) takes no room: the wheel scrolls the sidebar, never the page into white space.
    const heights = [file, fileOpen, folder, folderOpen]
    expect(heights.map((h) => h.scrollHeight)).toEqual(heights.map((h) => h.innerHeight))
    await page.getByRole('button', { name: 'Close sidebar' }).click()
  }, 90_000)

  it('keeps the header one compact row at 400 px and shows long file names with an ellipsis and the whole name as title', async () => {
    const longName = 'Quarterly report of the storage providers in the northern region, final version.txt'
    expect(await davPut(stack, `/${encodeURIComponent(longName)}`, 'a file with a long name')).toBe(201)
    await page.setViewportSize({ width: 400, height: 800 })
    await openFilesPage(page, stack.appUrl)
    const row = page.locator(`[data-test="file-row"][data-path="/${longName}"]`)
    await row.waitFor()
    const header = await page.locator('.preview-header').boundingBox()
    expect(header!.height).toBeLessThanOrEqual(80)
    // Nothing of the page runs out, sideways or below: the header's rows are taken from the list, not added to the page.
    expect(await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.scrollHeight])).toEqual([400, 800])
    const name = row.getByTestId('file-name')
    expect(await name.getAttribute('title')).toBe(longName)
    const shown = await name.evaluate((el) => {
      const box = el.getBoundingClientRect()
      const list = document.querySelector('.preview-files')!.getBoundingClientRect()
      return {
        left: box.left,
        right: box.right,
        listLeft: list.left,
        listRight: list.right,
        ellipsis: getComputedStyle(el).textOverflow,
        cut: el.scrollWidth > el.clientWidth,
      }
    })
    // The name sits wholly inside the list, cut only where an ellipsis says so.
    expect(shown.left).toBeGreaterThanOrEqual(shown.listLeft)
    expect(shown.right).toBeLessThanOrEqual(shown.listRight)
    if (shown.cut) expect(shown.ellipsis).toBe('ellipsis')
    await page.screenshot({ path: join(ARTIFACTS, 'preview-page-400px.png') })
    await page.setViewportSize({ width: 1280, height: 1100 })
  }, 60_000)

  it('saves a gateway link on the admin page and shows the test result', async () => {
    await page.goto(`${stack.appUrl}/settings/admin/gateway`)
    await page.getByTestId('form').waitFor()
    // At 400 px wide nothing of the form is cut off: no field, label, help text or button runs out of
    // the page or hides its text behind an ellipsis; the network select has the text fields' height.
    await page.setViewportSize({ width: 400, height: 1400 })
    const cut = await page.evaluate(() => {
      const width = document.documentElement.clientWidth
      return [...document.querySelectorAll('[data-test="form"] *')]
        .filter((el) => {
          const box = el.getBoundingClientRect()
          if (box.width === 0 || el.closest('.hidden-visually')) return false
          return box.right > width + 0.5 || (el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX === 'hidden')
        })
        .map((el) => `${el.tagName.toLowerCase()}.${el.className}: ${el.textContent?.trim().slice(0, 40)}`)
    })
    expect(cut).toEqual([])
    const heights = await page.evaluate(() => ({
      select: document.querySelector('select[data-test="network"]')!.getBoundingClientRect().height,
      selectWidth: document.querySelector('select[data-test="network"]')!.getBoundingClientRect().width,
      textWidth: document.querySelector('[data-test="gatewayUrl"] input, input[data-test="gatewayUrl"]')!.getBoundingClientRect().width,
      text: document.querySelector('[data-test="gatewayUrl"] input, input[data-test="gatewayUrl"]')!.getBoundingClientRect().height,
    }))
    expect(heights.select).toBeCloseTo(heights.text, 0)
    expect(heights.selectWidth).toBeCloseTo(heights.textWidth, 0)
    // A select shows its text without an ellipsis only if every option fits its inner width.
    const optionsFit = await page.evaluate(() => {
      const select = document.querySelector<HTMLSelectElement>('select[data-test="network"]')!
      const style = getComputedStyle(select)
      const context = document.createElement('canvas').getContext('2d')!
      context.font = style.font
      const inner = select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight)
      return [...select.options].every((o) => context.measureText(o.text).width <= inner)
    })
    expect(optionsFit).toBe(true)
    await page.locator('main').screenshot({ path: join(ARTIFACTS, 'gateway-admin-400px.png') })
    await page.setViewportSize({ width: 1280, height: 1100 })
    const gatewayPassword = readFileSync(join(dataDir, 'data', 'gateway-password'), 'utf8').trim()
    await page.getByLabel('Gateway URL').fill(stack.gatewayUrl)
    await page.getByLabel('Gateway user').fill('bridge')
    await page.getByLabel('Gateway password').fill(gatewayPassword)
    await page.getByRole('button', { name: 'Save' }).click()
    await page.getByTestId('saved').waitFor()
    expect(await page.getByTestId('password-state').textContent()).toContain('set')
    expect(await page.getByLabel('Gateway password').inputValue()).toBe('')

    await page.getByRole('button', { name: 'Test the link' }).click()
    const result = page.getByTestId('test-result')
    await result.waitFor()
    expect(await result.textContent()).toMatch(/The link works \(\d+ ms\): The gateway answered and accepted the credentials/)
    // Both directions a deployment needs: this browser reaches the bridge's route, the bridge the gateway.
    const checks = page.getByTestId('link-checks')
    await checks.locator('[data-check="browser-ocs"]').waitFor()
    expect(await checks.locator('[data-check="browser-ocs"]').getAttribute('data-ok')).toBe('true')
    expect(await checks.locator('[data-check="server-gateway"]').getAttribute('data-ok')).toBe('true')
    await page.locator('main').screenshot({ path: join(ARTIFACTS, 'gateway-admin.png') })

    // A link to nowhere: saving works, the test says the gateway cannot be reached.
    await page.getByLabel('Gateway URL').fill('http://127.0.0.1:9')
    await page.getByRole('button', { name: 'Save' }).click()
    await page.getByTestId('saved').waitFor()
    await page.getByRole('button', { name: 'Test the link' }).click()
    await expect.poll(() => result.textContent()).toContain('could not be reached')
    const gatewayCheck = checks.locator('[data-check="server-gateway"]')
    expect(await gatewayCheck.getAttribute('data-ok')).toBe('false')
    expect(await gatewayCheck.textContent()).toContain('start the gateway or correct the URL')

    // And a bad one never reaches the bridge: the page points at the field.
    await page.getByLabel('Path mapping').fill('/../{user}')
    await page.getByRole('button', { name: 'Save' }).click()
    await expect.poll(() => page.getByLabel('Path mapping').getAttribute('aria-invalid')).toBe('true')

    // Leave the stack linked to its own gateway.
    const reset = await fetch(`${stack.appUrl}/ocs/v2.php/apps/gateway/admin/settings`, {
      method: 'PUT',
      headers: { authorization: auth, 'ocs-apirequest': 'true', 'content-type': 'application/json' },
      body: JSON.stringify({
        gatewayUrl: '',
        gatewayUser: 'bridge',
        pathMap: '/{user}',
        network: 'simnet',
        ipfsGateway: 'https://ipfs.io',
      }),
    })
    expect(reset.status).toBe(200)
    expect(consoleErrors.filter((e) => !/Failed to load resource/.test(e))).toEqual([])
  }, 60_000)
})
