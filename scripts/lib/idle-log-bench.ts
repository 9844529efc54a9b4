import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { copyBundle, ensureBundle, hasChromium, launchChromium, logInToPreview, openInSidebar } from './browser.ts'
import { basicAuth, startStack } from './stack.ts'

/** A log line's source for the tally: its part and message (`simfoc: simulated Curio: proof sent`). */
function source(line: string): string {
  try {
    const entry = JSON.parse(line) as { part?: string; msg?: string; level?: number }
    return `${entry.part ?? '?'} (level ${entry.level ?? '?'}): ${entry.msg ?? line.slice(0, 60)}`
  } catch {
    return line.slice(0, 80)
  }
}

/**
 * Idle-log section: what `npm start` writes while nothing happens but an open
 * Files tab. Its own defaults (log level, simulated Onchain Cloud, pace), one
 * file uploaded and followed in the tab until `Offloaded`, then the lines
 * written during `minutes` more of the tab refreshing itself, per minute and
 * by source. An operator reads these logs: what repeats while idle buries
 * what matters.
 */
export async function benchIdleLog(minutes: number): Promise<void> {
  console.log(`\nidle log: lines a minute from npm start's defaults with a Files tab open, over ${minutes} min after Offloaded`)
  if (!hasChromium()) {
    console.log('  skipped: no /usr/bin/chromium')
    return
  }
  ensureBundle()
  const dir = mkdtempSync(join(tmpdir(), 'bench-idle-log-'))
  const bundleDir = join(dir, 'bundle')
  await copyBundle(bundleDir)
  // Unset: the ticker, log level and simulated providers the helper otherwise pins, so that npm start's own defaults run.
  const stack = await startStack(
    { DATA_DIR: join(dir, 'data'), BUNDLE_DIR: bundleDir, TICKER_ENABLED: undefined, LOG_LEVEL: undefined, SIMFOC_PROVIDERS: undefined },
    [],
    'server/main.ts',
    { readyTimeoutMs: 300_000 },
  )
  const browser = await launchChromium()
  try {
    const password = readFileSync(join(dir, 'data', 'app', 'admin-password'), 'utf8').trim()
    const upload = await fetch(`${stack.appUrl}/remote.php/dav/files/admin/hello.txt`, {
      method: 'PUT',
      headers: { authorization: basicAuth('admin', password) },
      body: 'hello filecoin\n',
    })
    if (upload.status !== 201) throw new Error(`upload answered ${upload.status}`)
    const page = await browser.newPage()
    await logInToPreview(page, stack.appUrl, 'admin', password)
    const tab = await openInSidebar(page, '/hello.txt')
    const started = Date.now()
    while ((await tab.getByTestId('state-label').textContent())?.trim() !== 'Offloaded') {
      if (Date.now() - started > 600_000) throw new Error('not Offloaded within 10 minutes')
      await page.waitForTimeout(1000)
    }
    const copies = (await tab.getByTestId('copies').textContent())?.trim()
    console.log(`  Offloaded ${((Date.now() - started) / 1000).toFixed(0)} s after the tab opened: ${copies}`)
    const from = stack.output().length
    await page.waitForTimeout(minutes * 60_000)
    const lines = stack.output().slice(from).split('\n').filter(Boolean)
    const tally = new Map<string, number>()
    for (const line of lines) tally.set(source(line), (tally.get(source(line)) ?? 0) + 1)
    console.log(`  ${(lines.length / minutes).toFixed(1)} lines a minute (${lines.length} in ${minutes} min)`)
    for (const [what, count] of [...tally].sort((a, b) => b[1] - a[1]).slice(0, 10)) {
      console.log(`  ${(count / minutes).toFixed(1).padStart(6)}/min  ${what}`)
    }
  } finally {
    await browser.close()
    await stack.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}
