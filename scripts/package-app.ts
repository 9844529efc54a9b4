/**
 * Packs the Nextcloud app: builds the front end (unless --skip-build), then
 * writes dist/gateway-<version>.tar.gz that unpacks into a Nextcloud `apps/`
 * folder as `gateway/`. Also measures the sidebar's initial JavaScript
 * (js/gateway-init.mjs plus the chunks it imports statically), gzipped,
 * against the budget.
 */
import { spawnSync } from 'node:child_process'
import { createWriteStream, existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { dirname, join, posix, relative, resolve, sep } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { parseArgs } from 'node:util'
import { createGzip } from 'node:zlib'
import { storagePath } from '../plugin-ui/icons.ts'
import { initialJs } from './lib/bundle-size.ts'

const HELP = `Usage: npm run package:app -- [options]

Builds the Nextcloud app and writes <out>/gateway-<version>.tar.gz, which
unpacks into a Nextcloud apps/ folder as gateway/ (appinfo, lib, templates,
js, css, img, README.md).

Options:
  --out <dir>        where to write the archive (default: dist)
  --skip-build       package the js/ already built instead of running vite build
  --budget-kb <n>    fail when the script every Files page loads exceeds n KB gzipped (default: 15)
  --json             print a JSON summary instead of text
  -h, --help         show this help
`

const APP_ID = 'gateway'
const ROOT = resolve(import.meta.dirname, '..')

interface Entry {
  /** Path inside the archive, always `gateway/...` with forward slashes. */
  name: string
  body: Buffer | null
  mode: number
}

// ---- tar (POSIX ustar), just enough for regular files and directories ----

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, '0') + '\0'
}

/** ustar keeps names ≤ 100 bytes, or splits them into prefix (≤ 155) + name. */
function splitName(name: string): [string, string] {
  if (Buffer.byteLength(name) <= 100) return ['', name]
  const cut = name.lastIndexOf('/', name.length - 2)
  const prefix = name.slice(0, cut)
  const rest = name.slice(cut + 1)
  if (cut <= 0 || Buffer.byteLength(prefix) > 155 || Buffer.byteLength(rest) > 100) {
    throw new Error(`Path too long for a ustar archive: ${name}`)
  }
  return [prefix, rest]
}

function tarHeader(entry: Entry, mtime: number): Buffer {
  const header = Buffer.alloc(512)
  const [prefix, name] = splitName(entry.name)
  const isDir = entry.body === null
  header.write(name, 0, 100, 'utf8')
  header.write(octal(entry.mode, 8), 100, 8, 'ascii')
  header.write(octal(0, 8), 108, 8, 'ascii') // uid
  header.write(octal(0, 8), 116, 8, 'ascii') // gid
  header.write(octal(isDir ? 0 : entry.body!.length, 12), 124, 12, 'ascii')
  header.write(octal(mtime, 12), 136, 12, 'ascii')
  header.write('        ', 148, 8, 'ascii') // checksum is computed with this field as spaces
  header.write(isDir ? '5' : '0', 156, 1, 'ascii')
  header.write('ustar\0', 257, 6, 'ascii')
  header.write('00', 263, 2, 'ascii')
  header.write(prefix, 345, 155, 'utf8')
  let sum = 0
  for (const byte of header) sum += byte
  header.write(octal(sum, 7) + ' ', 148, 8, 'ascii')
  return header
}

async function* tarStream(entries: Entry[], mtime: number): AsyncGenerator<Buffer> {
  for (const entry of entries) {
    yield tarHeader(entry, mtime)
    if (entry.body && entry.body.length > 0) {
      yield entry.body
      const pad = (512 - (entry.body.length % 512)) % 512
      if (pad) yield Buffer.alloc(pad)
    }
  }
  yield Buffer.alloc(1024) // two empty blocks end the archive
}

// ---- what goes in ----

function walk(dir: string, keep: (file: string) => boolean): string[] {
  if (!existsSync(dir)) return []
  const out: string[] = []
  for (const item of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, item.name)
    if (item.isDirectory()) out.push(...walk(full, keep))
    else if (item.isFile() && keep(full)) out.push(full)
  }
  return out.sort()
}

function toArchiveName(file: string): string {
  return posix.join(APP_ID, relative(ROOT, file).split(sep).join('/'))
}

function appIcon(fill: string): Buffer {
  return Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32" viewBox="0 0 24 24"><path fill="${fill}" d="${storagePath}"/></svg>\n`,
  )
}

function collect(): Entry[] {
  const files: Entry[] = []
  const add = (dir: string, keep: (f: string) => boolean = () => true) => {
    for (const file of walk(join(ROOT, dir), keep)) {
      files.push({ name: toArchiveName(file), body: readFileSync(file), mode: 0o644 })
    }
  }
  add('appinfo')
  add('lib', (f) => f.endsWith('.php'))
  add('templates', (f) => f.endsWith('.php'))
  // Source maps stay out: they triple the size and Nextcloud never serves them to users.
  add('js', (f) => !f.endsWith('.map'))
  add('css', (f) => !f.endsWith('.map'))
  // The admin section icon (lib/Settings/AdminSection.php), drawn from the tab icon.
  files.push({ name: `${APP_ID}/img/app.svg`, body: appIcon('#fff'), mode: 0o644 })
  files.push({ name: `${APP_ID}/img/app-dark.svg`, body: appIcon('#000'), mode: 0o644 })
  files.push({ name: `${APP_ID}/README.md`, body: readFileSync(join(ROOT, 'plugin-ui', 'README.md')), mode: 0o644 })

  // Parent directories first, as tar and Nextcloud's app installer expect.
  const dirs = new Set<string>()
  for (const f of files) {
    for (let d = posix.dirname(f.name); d !== '.'; d = posix.dirname(d)) dirs.add(d)
  }
  const dirEntries: Entry[] = [...dirs].sort().map((name) => ({ name: `${name}/`, body: null, mode: 0o755 }))
  return [...dirEntries, ...files.sort((a, b) => a.name.localeCompare(b.name))]
}

// ---- checks ----

function readVersions(): { pkg: string; info: string; nextcloud: { min: string; max: string } } {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version as string
  const xml = readFileSync(join(ROOT, 'appinfo', 'info.xml'), 'utf8')
  const info = /<version>([^<]+)<\/version>/.exec(xml)?.[1]?.trim() ?? ''
  const range = /<nextcloud\s+min-version="(\d+)"\s+max-version="(\d+)"\s*\/>/.exec(xml)
  if (!range) throw new Error('appinfo/info.xml declares no <nextcloud min-version=".." max-version=".."/>')
  return { pkg, info, nextcloud: { min: range[1], max: range[2] } }
}

async function main() {
  const { values } = parseArgs({
    options: {
      out: { type: 'string', default: 'dist' },
      'skip-build': { type: 'boolean', default: false },
      'budget-kb': { type: 'string', default: '15' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  })
  if (values.help) {
    process.stdout.write(HELP)
    return
  }
  const budgetKb = Number(values['budget-kb'])
  if (!Number.isFinite(budgetKb) || budgetKb <= 0) throw new Error('--budget-kb must be a positive number')

  const { pkg, info, nextcloud } = readVersions()
  if (pkg !== info) throw new Error(`Version mismatch: package.json has ${pkg}, appinfo/info.xml has ${info}`)

  if (!values['skip-build']) {
    const vite = join(ROOT, 'node_modules', '.bin', 'vite')
    const build = spawnSync(vite, ['build'], { cwd: ROOT, stdio: values.json ? ['ignore', 'ignore', 'inherit'] : 'inherit' })
    if (build.status !== 0) throw new Error(`vite build failed (exit ${build.status ?? build.signal})`)
  }
  const jsDir = join(ROOT, 'js')
  if (!existsSync(join(jsDir, `${APP_ID}-init.mjs`)) || !existsSync(join(jsDir, `${APP_ID}-admin.mjs`))) {
    throw new Error('js/gateway-init.mjs or js/gateway-admin.mjs is missing: run without --skip-build')
  }

  const initial = initialJs(jsDir, `${APP_ID}-init.mjs`)
  const entries = collect()
  const archive = resolve(ROOT, values.out!, `${APP_ID}-${pkg}.tar.gz`)
  await mkdir(dirname(archive), { recursive: true })
  const mtime = Math.floor(Number(process.env.SOURCE_DATE_EPOCH ?? Date.now() / 1000))
  await pipeline(Readable.from(tarStream(entries, mtime)), createGzip({ level: 9 }), createWriteStream(archive))

  const summary = {
    archive,
    version: pkg,
    nextcloud,
    files: entries.filter((e) => e.body !== null).length,
    archiveBytes: statSync(archive).size,
    initialJs: { files: initial.files, gzipBytes: initial.gzipBytes, budgetBytes: budgetKb * 1024 },
  }
  if (values.json) {
    process.stdout.write(JSON.stringify(summary) + '\n')
  } else {
    process.stdout.write(
      `Wrote ${relative(process.cwd(), archive)} (${summary.files} files, ${(summary.archiveBytes / 1024).toFixed(1)} KB) for Nextcloud ${nextcloud.min}–${nextcloud.max}\n`,
    )
    process.stdout.write(
      `Initial sidebar JS (${initial.files.join(' + ')}): ${(initial.gzipBytes / 1024).toFixed(1)} KB gzipped, budget ${budgetKb} KB\n`,
    )
  }
  if (initial.gzipBytes > budgetKb * 1024) {
    throw new Error(`Initial sidebar JS is ${(initial.gzipBytes / 1024).toFixed(1)} KB gzipped, over the ${budgetKb} KB budget`)
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`package-app: ${err instanceof Error ? err.message : String(err)}\n`)
  process.exitCode = 1
})
