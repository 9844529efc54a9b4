import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'

/** Debian's chromium (`.ci/run` installs it); playwright cannot download browsers here. */
export const CHROMIUM = '/usr/bin/chromium'
export const hasChromium = () => existsSync(CHROMIUM)

const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic']

export async function launchChromium(): Promise<Browser> {
  const { chromium, selectors } = await import('playwright-core')
  // The app's components and the preview page mark their parts with data-test.
  selectors.setTestIdAttribute('data-test')
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS })
}

const ROOT = join(import.meta.dirname, '..', '..')

/** Builds the app's front end (js/) once when it is not there yet. */
export function ensureBundle(): void {
  if (existsSync(join(ROOT, 'js', 'gateway-main.mjs')) && existsSync(join(ROOT, 'js', 'gateway-admin.mjs'))) return
  execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'ignore' })
}
