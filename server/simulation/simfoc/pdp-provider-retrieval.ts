import * as dagCbor from '@ipld/dag-cbor'
import * as dagPb from '@ipld/dag-pb'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { pipeline } from 'node:stream/promises'
import { CID } from 'multiformats/cid'
import { varint } from 'multiformats'
import type { ProviderDb } from './pdp-provider-db.ts'
import { parsePieceCid } from './pdp-provider-piece.ts'
import type { PieceStore } from './pdp-provider-store.ts'

/**
 * Retrieval from a simulated Curio: whole pieces by piece CID (Curio
 * market/retrieval/piecehandler.go, with Range as Go's http.ServeContent
 * serves it) and blocks of indexed CAR pieces as a trustless gateway
 * (Curio mounts ipld/frisbii on /ipfs/: raw blocks and CARs of a DAG).
 */

const DAG_PB = 0x70
const DAG_CBOR = 0x71
const RAW = 0x55
const IDENTITY = 0x00

export interface RetrievalContext {
  db: ProviderDb
  store: PieceStore
}

/** A constant Last-Modified: a piece named by its CID never changes (piecehandler.go lastModified = UnixMilli(1)). */
const LAST_MODIFIED = new Date(1).toUTCString()

/** A small part of Go's http.DetectContentType: the types a piece is likely to start with. */
export function sniffContentType(head: Uint8Array): string {
  const starts = (...sig: number[]) => sig.every((b, i) => head[i] === b)
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'image/png'
  if (starts(0xff, 0xd8, 0xff)) return 'image/jpeg'
  if (starts(0x47, 0x49, 0x46, 0x38)) return 'image/gif'
  if (starts(0x25, 0x50, 0x44, 0x46, 0x2d)) return 'application/pdf'
  if (starts(0x50, 0x4b, 0x03, 0x04)) return 'application/zip'
  if (starts(0x1f, 0x8b, 0x08)) return 'application/x-gzip'
  const text = Buffer.from(head.subarray(0, 512)).toString('latin1')
  if (/^\s*<(!DOCTYPE HTML|HTML|HEAD|SCRIPT|BODY|P|DIV|TITLE|TABLE)[\s>]/i.test(text)) return 'text/html; charset=utf-8'
  // Go: no binary bytes (control characters other than whitespace) means text.
  for (const b of head.subarray(0, 512)) {
    if (b <= 0x08 || b === 0x0b || (b >= 0x0e && b <= 0x1a) || (b >= 0x1c && b <= 0x1f)) return 'application/octet-stream'
  }
  return 'text/plain; charset=utf-8'
}

const EXTENSIONS: Record<string, string> = {
  'image/png': '.png',
  'image/jpeg': '.jpg',
  'image/gif': '.gif',
  'application/pdf': '.pdf',
  'application/zip': '.zip',
  'application/x-gzip': '.gz',
  'text/html; charset=utf-8': '.htm',
  'text/plain; charset=utf-8': '.txt',
}

type Range = { start: number; end: number }

/** One byte range of `size` from a Range header; 'invalid' when unsatisfiable, null when absent or not a single range (whole content). */
function parseRange(header: string | undefined, size: number): Range | 'invalid' | null {
  if (!header) return null
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim())
  if (!m) return header.trim().startsWith('bytes=') && !header.includes(',') ? 'invalid' : null
  const [, a, b] = m
  if (a === '' && b === '') return 'invalid'
  if (a === '') {
    const n = Number(b)
    if (n === 0) return 'invalid'
    return { start: Math.max(0, size - n), end: size - 1 }
  }
  const start = Number(a)
  if (start >= size) return 'invalid'
  const end = b === '' ? size - 1 : Math.min(Number(b), size - 1)
  if (end < start) return 'invalid'
  return { start, end }
}

/** GET/HEAD /piece/<cid>: the raw piece bytes (without padding), v1 or v2 CID. */
export async function servePiece(ctx: RetrievalContext, req: IncomingMessage, res: ServerResponse, cidText: string): Promise<void> {
  let v1: string
  try {
    v1 = parsePieceCid(cidText).v1.toString()
  } catch {
    res.writeHead(400).end()
    return
  }
  // Curio serves pieces it holds for a deal or a PDP data set (cachedreader: ErrNoDeal otherwise).
  const ref = ctx.db.pieceRefByCid(v1)
  const stored = ref ? await ctx.store.meta(v1) : null
  if (!ref || !stored || !(await ctx.store.dataPresent(v1))) {
    res.writeHead(404).end()
    return
  }
  const size = stored.rawSize
  let head: Uint8Array
  try {
    head = await ctx.store.read(v1, 0, 512)
  } catch {
    res.writeHead(500).end()
    return
  }
  const contentType = sniffContentType(head)
  res.setHeader('Vary', 'Accept-Encoding')
  res.setHeader('Cache-Control', 'public, max-age=29030400, immutable')
  res.setHeader('Content-Type', contentType)
  if (contentType !== 'application/octet-stream' && EXTENSIONS[contentType]) {
    const filename = `${cidText}${EXTENSIONS[contentType]}`
    res.setHeader('Content-Disposition', `inline; filename="${filename}"; filename*=UTF-8''${encodeURIComponent(filename)}`)
  }
  res.setHeader('Etag', `"${cidText}"`)
  res.setHeader('Last-Modified', LAST_MODIFIED)
  res.setHeader('Accept-Ranges', 'bytes')
  if (req.headers['if-none-match'] === `"${cidText}"`) {
    res.writeHead(304).end()
    return
  }
  const range = parseRange(req.headers.range, size)
  if (range === 'invalid') {
    res.setHeader('Content-Range', `bytes */${size}`)
    res.setHeader('Content-Type', 'text/plain; charset=utf-8')
    res.writeHead(416).end('invalid range: failed to overlap\n')
    return
  }
  const { start, end } = range ?? { start: 0, end: size - 1 }
  if (range) res.setHeader('Content-Range', `bytes ${start}-${end}/${size}`)
  res.setHeader('Content-Length', String(size === 0 ? 0 : end - start + 1))
  res.writeHead(range ? 206 : 200)
  if (req.method === 'HEAD' || size === 0) {
    res.end()
    return
  }
  await pipeline(ctx.store.stream(v1, start, end), res).catch(() => res.destroy())
}

/** The blocks a block links to, for the codecs a trustless gateway walks. */
function links(cid: CID, bytes: Uint8Array): CID[] {
  if (cid.code === DAG_PB) return dagPb.decode(bytes).Links.map((l) => l.Hash as CID)
  if (cid.code === DAG_CBOR) {
    const found: CID[] = []
    const walk = (value: unknown): void => {
      const asCid = CID.asCID(value)
      if (asCid) return void found.push(asCid as CID)
      if (Array.isArray(value)) value.forEach(walk)
      else if (value && typeof value === 'object' && !(value instanceof Uint8Array)) Object.values(value).forEach(walk)
    }
    walk(dagCbor.decode(bytes))
    return found
  }
  return []
}

/** The indexed pieces that hold a block, in the order their refs were made. */
async function findBlock(ctx: RetrievalContext, cid: CID): Promise<Uint8Array | null> {
  for (const ref of ctx.db.t.pieceRefs) {
    if (!ref.indexed) continue
    const bytes = await ctx.store.block(ref.pieceCid, cid)
    if (bytes) return bytes
  }
  return null
}

const carSection = (cid: CID, bytes: Uint8Array): Uint8Array => {
  const length = cid.bytes.length + bytes.length
  const prefix = varint.encodeTo(length, new Uint8Array(varint.encodingLength(length)))
  const out = new Uint8Array(prefix.length + length)
  out.set(prefix, 0)
  out.set(cid.bytes, prefix.length)
  out.set(bytes, prefix.length + cid.bytes.length)
  return out
}

function carHeader(root: CID): Uint8Array {
  const header = dagCbor.encode({ roots: [root], version: 1 })
  const prefix = varint.encodeTo(header.length, new Uint8Array(varint.encodingLength(header.length)))
  const out = new Uint8Array(prefix.length + header.length)
  out.set(prefix, 0)
  out.set(header, prefix.length)
  return out
}

function textError(res: ServerResponse, status: number, msg: string): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' })
  res.end(`${msg}\n`)
}

/**
 * GET/HEAD /ipfs/<cid>: `?format=raw` or `Accept: application/vnd.ipld.raw`
 * gives the block; `?format=car` or `Accept: application/vnd.ipld.car` (and
 * no format at all) gives a CARv1 of the DAG in depth-first order;
 * `dag-scope=block` limits it to the root block, `dups=y` repeats blocks met twice.
 */
export async function serveIpfs(ctx: RetrievalContext, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  const rest = url.pathname.slice('/ipfs/'.length)
  const [cidText, ...path] = rest.split('/')
  let root: CID
  try {
    root = CID.parse(decodeURIComponent(cidText)) as CID
  } catch {
    return textError(res, 400, `failed to parse CID path parameter`)
  }
  if (path.some((p) => p !== '')) return textError(res, 400, 'path traversal is not supported')
  const accept = String(req.headers.accept ?? '')
  const format =
    url.searchParams.get('format') ??
    (accept.includes('application/vnd.ipld.raw')
      ? 'raw'
      : accept.includes('application/vnd.ipld.car') || accept === '' || accept.includes('*/*')
        ? 'car'
        : null)
  if (format !== 'raw' && format !== 'car')
    return textError(res, 400, 'invalid Accept header; unsupported: ' + (url.searchParams.get('format') ?? accept))
  const rootBytes = root.multihash.code === IDENTITY ? root.multihash.digest : await findBlock(ctx, root)
  if (!rootBytes) return textError(res, 404, `failed to load root node: ipld: could not find ${root}`)
  const common = {
    'X-Ipfs-Path': `/ipfs/${cidText}`,
    'Cache-Control': 'public, max-age=29030400, immutable',
    'X-Content-Type-Options': 'nosniff',
  }
  if (format === 'raw') {
    res.writeHead(200, {
      ...common,
      'Content-Type': 'application/vnd.ipld.raw',
      Etag: `"${root}.raw"`,
      'Content-Length': String(rootBytes.length),
    })
    res.end(req.method === 'HEAD' ? undefined : rootBytes)
    return
  }
  const dups = url.searchParams.get('dups') === 'y'
  const scope = url.searchParams.get('dag-scope') ?? 'all'
  res.writeHead(200, {
    ...common,
    'Content-Type': `application/vnd.ipld.car; version=1; order=dfs; dups=${dups ? 'y' : 'n'}`,
    Etag: `"${root}.car"`,
  })
  if (req.method === 'HEAD') return void res.end()
  const write = (bytes: Uint8Array) => new Promise<void>((resolve, reject) => res.write(bytes, (err) => (err ? reject(err) : resolve())))
  try {
    await write(carHeader(root))
    const seen = new Set<string>()
    const stack: { cid: CID; bytes: Uint8Array | null }[] = [{ cid: root, bytes: rootBytes }]
    while (stack.length > 0) {
      const { cid, bytes: known } = stack.pop()!
      const key = Buffer.from(cid.multihash.bytes).toString('hex')
      if (seen.has(key) && !dups) continue
      seen.add(key)
      if (cid.multihash.code === IDENTITY) continue
      const bytes = known ?? (await findBlock(ctx, cid))
      // A block missing here ends the CAR early, as a traversal error does mid-stream.
      if (!bytes) break
      await write(carSection(cid, bytes))
      if (scope === 'block' || (cid.code === RAW && bytes)) continue
      const children = links(cid, bytes)
      for (let i = children.length - 1; i >= 0; i--) stack.push({ cid: children[i], bytes: null })
    }
  } catch {
    res.destroy()
    return
  }
  res.end()
}
