/**
 * One picture of what a person sees in several places at once (a sidebar
 * tab, an admin page, a terminal): each part's screenshot or text under its
 * caption, laid out on a plain page in the same chromium and photographed.
 */
import type { Browser } from 'playwright-core'

export interface Part {
  caption: string
  /** A screenshot (PNG) of the part. */
  png?: Buffer
  /** Or what a terminal printed. */
  text?: string
}

const escape = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!)

/** Writes the parts, one beside the other, as one PNG at `path`. */
export async function sideBySide(browser: Browser, parts: Part[], path: string): Promise<void> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 400 } })
  try {
    const cells = parts.map((p) => {
      const body = p.png ? `<img src="data:image/png;base64,${p.png.toString('base64')}">` : `<pre>${escape(p.text ?? '')}</pre>`
      return `<figure><figcaption>${escape(p.caption)}</figcaption>${body}</figure>`
    })
    await page.setContent(`<!doctype html><style>
      body { margin: 0; padding: 12px; font: 14px sans-serif; background: #f4f4f4; display: flex; flex-wrap: wrap; gap: 12px; align-items: flex-start; }
      figure { margin: 0; background: #fff; border: 1px solid #ccc; padding: 8px; max-width: 640px; }
      figcaption { font-weight: bold; margin-bottom: 6px; }
      img { display: block; max-width: 620px; }
      pre { margin: 0; font: 13px monospace; white-space: pre-wrap; }
    </style>${cells.join('')}`)
    await page.locator('body').screenshot({ path })
  } finally {
    await page.close()
  }
}
