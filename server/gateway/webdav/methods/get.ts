import type { Response } from 'express'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { nameOf, type Entry } from '../../namespace.ts'
import type { DavContext, MethodHandler } from '../context.ts'
import { contentTypeFor, DEFAULT_TYPE, downloadHeaders } from '../content-type.ts'
import { DavError, notFound } from '../errors.ts'
import { requestPath } from '../paths.ts'
import { checkConditions, quoteEtag } from '../preconditions.ts'
import { parseRange } from '../range.ts'

/** GET and HEAD: a file's bytes (one byte range at most), or a plain listing of a folder. */
export const get: MethodHandler = async (req, res, ctx) => {
  const { path, slash } = requestPath(req)
  const entry = await ctx.namespace.get(path)
  if (!entry || (slash && entry.kind === 'file')) throw notFound()
  await checkConditions(req, ctx, path)
  const head = req.method === 'HEAD'
  res.set({
    ETag: quoteEtag(entry.etag),
    'OC-ETag': quoteEtag(entry.etag),
    'Last-Modified': new Date(entry.modifiedMs).toUTCString(),
  })

  if (entry.kind === 'dir') {
    const body = (await ctx.namespace.children(path)).map((c) => nameOf(c.path) + (c.kind === 'dir' ? '/' : '')).join('\n') + '\n'
    res.status(200).set({
      'Content-Type': 'text/plain; charset=utf-8',
      'Content-Length': String(Buffer.byteLength(body)),
      ...downloadHeaders(nameOf(path), 'text/plain'),
    })
    res.end(head ? undefined : body)
    return
  }

  const contentType = entry.contentType ?? contentTypeFor(entry.path, undefined) ?? DEFAULT_TYPE
  res.set({ 'Content-Type': contentType, 'Accept-Ranges': 'bytes', ...downloadHeaders(nameOf(entry.path), contentType) })
  if (entry.cid) res.set('X-Content-CID', entry.cid)

  const ifRange = req.headers['if-range']
  const rangeApplies = ifRange === undefined || ifRange === quoteEtag(entry.etag) || ifRange === res.get('Last-Modified')
  const range = rangeApplies ? parseRange(req.headers.range, entry.size) : undefined
  if (range === 'unsatisfiable') {
    throw new DavError(416, 'RANGE_NOT_SATISFIABLE', 'Range not satisfiable', undefined, { 'Content-Range': `bytes */${entry.size}` })
  }
  const length = range ? range.end - range.start + 1 : entry.size
  res.status(range ? 206 : 200).set('Content-Length', String(length))
  if (range) res.set('Content-Range', `bytes ${range.start}-${range.end}/${entry.size}`)
  if (head || length === 0) {
    res.end()
    return
  }
  await streamContent(ctx, entry, range, res)
}

/**
 * Pulls the first chunk before sending headers, so content the store cannot
 * find is still a clean error status; after that a failure can only cut the
 * connection.
 */
async function streamContent(ctx: DavContext, entry: Entry, range: { start: number; end: number } | undefined, res: Response) {
  const iterator = ctx.content.read(entry.cid!, range)[Symbol.asyncIterator]()
  const first = await iterator.next()
  async function* chunks() {
    try {
      if (!first.done) yield first.value
      for (;;) {
        const next = await iterator.next()
        if (next.done) return
        yield next.value
      }
    } finally {
      await iterator.return?.()
    }
  }
  await pipeline(Readable.from(chunks(), { objectMode: false }), res)
}
