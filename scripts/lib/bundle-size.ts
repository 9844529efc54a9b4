import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'

/**
 * Gzipped bytes of an entry module and every chunk it imports statically:
 * what a Files page loads before the tab exists. `import("./x")` chunks load lazily.
 */
export function initialJs(jsDir: string, entry: string): { files: string[]; gzipBytes: number } {
  const seen = new Set<string>()
  const visit = (file: string) => {
    if (seen.has(file)) return
    seen.add(file)
    const code = readFileSync(join(jsDir, file), 'utf8')
    // Static imports only: `import{..}from"./x.mjs"` or `import"./x.mjs"`.
    for (const m of code.matchAll(/(?:\bfrom\s*|\bimport\s*)["']\.\/([^"']+\.mjs)["']/g)) visit(m[1])
  }
  visit(entry)
  const files = [...seen]
  return { files, gzipBytes: files.reduce((sum, f) => sum + gzipSync(readFileSync(join(jsDir, f)), { level: 9 }).length, 0) }
}
