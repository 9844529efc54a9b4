import { execFileSync } from 'node:child_process'
import { cpSync, existsSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import type { Browser, Locator, Page } from 'playwright-core'

/** Debian's chromium (`.ci/run` installs it); playwright cannot download browsers here. */
export const CHROMIUM = '/usr/bin/chromium'
export const hasChromium = () => existsSync(CHROMIUM)

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
]

export async function launchChromium(): Promise<Browser> {
  const { chromium, selectors } = await import('playwright-core')
  // The app's components and the preview page mark their parts with data-test.
  selectors.setTestIdAttribute('data-test')
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS })
}

/** Logs in on the preview page's login form and waits for the files page. */
export async function logInToPreview(page: Page, appUrl: string, user: string, password: string): Promise<void> {
  await page.goto(`${appUrl}/`)
  await page.getByLabel('User').fill(user)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Log in' }).click()
  await page.getByTestId('user').waitFor()
}

/** Opens the current folder's file at `path` (e.g. `/hello.txt`) in the sidebar; resolves with the sidebar once its record shows. */
export async function openInSidebar(page: Page, path: string): Promise<Locator> {
  await page.locator(`[data-test="file-row"][data-path="${path}"] button.preview-files__name`).click()
  const sidebar = page.locator('#app-sidebar')
  await sidebar.getByTestId('record').waitFor({ timeout: 15_000 })
  return sidebar
}

const ROOT = join(import.meta.dirname, '..', '..')

/** Builds the app's front end (js/) once when it is not there yet. */
export function ensureBundle(): void {
  if (existsSync(join(ROOT, 'js', 'gateway-init.mjs')) && existsSync(join(ROOT, 'js', 'gateway-admin.mjs'))) return
  execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'ignore' })
}

/**
 * A private copy of the built bundle, so that a rebuild of js/ by another test
 * (package-app) cannot pull files from under the page. Retries while a build
 * elsewhere has left js/ half written.
 */
export async function copyBundle(to: string): Promise<void> {
  const from = join(ROOT, 'js')
  for (let attempt = 0; attempt < 60; attempt++) {
    try {
      rmSync(to, { recursive: true, force: true })
      cpSync(from, to, { recursive: true })
      const files = new Set(readdirSync(to))
      const complete = ['gateway-init.mjs', 'gateway-admin.mjs'].every((entry) => {
        if (!files.has(entry)) return false
        const code = readFileSync(join(to, entry), 'utf8')
        return [...code.matchAll(/["'](?:\.\/|js\/)([\w.-]+\.mjs)["']/g)].every((m) => files.has(m[1]))
      })
      if (complete) return
    } catch {
      // js/ changed while copying: try again.
    }
    await new Promise((r) => setTimeout(r, 500))
  }
  throw new Error('js/ stayed incomplete; run npm run build')
}
