import type { Request } from 'express'
import { createHash, type Hash } from 'node:crypto'
import { isDiskFull } from '../../../shared/disk.ts'
import { parentOf, nameOf } from '../../namespace.ts'
import { stallGuard } from '../body.ts'
import type { MethodHandler } from '../context.ts'
import { contentTypeFor } from '../content-type.ts'
import { badPath, badRequest, conflict, DavError } from '../errors.ts'
import { requestPath } from '../paths.ts'
import { checkWrite, guardingLocks, quoteEtag, requireTokens } from '../preconditions.ts'
import { ocId } from '../props.ts'

const notAFile = () =>
  new DavError(405, 'IS_A_FOLDER', 'A folder cannot be replaced by PUT', undefined, {
    Allow: 'OPTIONS, GET, HEAD, DELETE, PROPFIND, PROPPATCH, MKCOL, COPY, MOVE, LOCK, UNLOCK',
  })

/**
 * PUT streams the body straight into the content store and names the result
 * in the namespace only once every announced byte has arrived, so an aborted
 * or short upload replaces nothing.
 */
export const put: MethodHandler = async (req, res, ctx) => {
  const { path, slash } = requestPath(req)
  const existing = await ctx.namespace.get(path)
  if (path === '/' || existing?.kind === 'dir') throw notAFile()
  if (slash) throw badPath('A file path cannot end with a slash')
  if (req.headers['content-range']) throw badRequest('Partial PUT (Content-Range) is not supported')
  const parent = await ctx.namespace.get(parentOf(path))
  if (parent?.kind !== 'dir') throw conflict('The parent folder does not exist')
  const expected = contentLength(req)
  const modifiedMs = mtimeOf(req)
  const checksum = checksumOf(req)
  const change = existing ? 'write' : 'bind'
  const tokens = await checkWrite(req, ctx, path, change)
  // A margin before the disk is full: what is already stored must still fit as CAR files to be sealed.
  const refusal = await ctx.uploadRefusal?.(expected)
  if (refusal) throw new DavError(507, 'INSUFFICIENT_STORAGE', refusal, undefined, { 'Retry-After': '60' })

  const controller = new AbortController()
  const onClose = () => {
    if (!req.complete) controller.abort()
  }
  req.once('close', onClose)
  const stall = stallGuard(req)
  let received = 0
  async function* body(): AsyncIterable<Uint8Array> {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      received += chunk.length
      stall.touch()
      checksum?.hash.update(chunk)
      yield chunk
    }
  }
  let stored: { cid: string; size: number; dagSize: number }
  try {
    stored = await ctx.content.ingest(body(), { signal: controller.signal })
  } catch (err) {
    // A full disk fails the write before the body has arrived: that is the server's fault, not an interrupted upload.
    if (isDiskFull(err)) throw err
    if (controller.signal.aborted || !req.complete)
      throw new DavError(400, 'UPLOAD_ABORTED', 'The upload was interrupted; nothing was stored')
    throw err
  } finally {
    req.off('close', onClose)
    stall.stop()
  }
  if (!req.complete || (expected !== undefined && received !== expected) || stored.size !== received) {
    throw new DavError(400, 'UPLOAD_INCOMPLETE', `Received ${received} bytes, expected ${expected ?? 'more'}; nothing was stored`)
  }
  if (checksum && checksum.hash.digest('hex') !== checksum.hex) {
    throw new DavError(
      400,
      'CHECKSUM_MISMATCH',
      'The computed checksum does not match the one received from the client; nothing was stored',
    )
  }

  const { created, entry } = await ctx.atomically(async (t) => {
    // The tree and the locks may have changed while the bytes were arriving.
    if ((await t.namespace.get(parentOf(path)))?.kind !== 'dir') throw conflict('The parent folder was removed during the upload')
    if ((await t.namespace.get(path))?.kind === 'dir') throw notAFile()
    await requireTokens(req, t, await guardingLocks(t, path, change), tokens)
    const put = await t.namespace.putFile(path, {
      ...stored,
      contentType: contentTypeFor(nameOf(path), req.headers['content-type']),
      modifiedMs,
      checksum: checksum?.value ?? null,
    })
    return { ...put, entry: (await t.namespace.get(path))! }
  })
  const etag = quoteEtag(entry.etag)
  // Nextcloud's answer headers: sync clients record the etag and the file's id from them.
  res
    .status(created ? 201 : 204)
    .set({ ETag: etag, 'OC-ETag': etag, 'OC-FileId': ocId(entry.fileId, ctx.namespace.instanceId), 'Content-Length': '0' })
  if (modifiedMs !== undefined) res.set('X-OC-MTime', 'accepted')
  res.end()
}

function contentLength(req: Request): number | undefined {
  const raw = req.headers['content-length']
  if (raw === undefined) return undefined
  if (!/^\d+$/.test(raw)) throw badRequest('Invalid Content-Length')
  return Number(raw)
}

/** Nextcloud clients send `X-OC-Mtime: <unix seconds>` to keep the file's own modification time. */
function mtimeOf(req: Request): number | undefined {
  const raw = req.headers['x-oc-mtime']
  if (raw === undefined) return undefined
  const value = String(raw).trim()
  if (!/^\d{1,12}(\.\d+)?$/.test(value)) throw badRequest('X-OC-Mtime must be a unix timestamp in seconds')
  return Math.round(Number(value) * 1000)
}

const CHECKSUM_ALGORITHMS: Record<string, { hash: string; hexLength: number }> = {
  SHA1: { hash: 'sha1', hexLength: 40 },
  MD5: { hash: 'md5', hexLength: 32 },
  SHA256: { hash: 'sha256', hexLength: 64 },
}

/**
 * `OC-Checksum: SHA1:<hex>` as Nextcloud's clients send it: verified while the
 * body streams in and kept for `oc:checksums`. Types we cannot compute
 * (Adler32) and malformed values are ignored, as Nextcloud ignores them.
 */
function checksumOf(req: Request): { value: string; hex: string; hash: Hash } | undefined {
  const match = /^\s*([A-Za-z0-9]+):([0-9a-fA-F]+)\s*$/.exec(String(req.headers['oc-checksum'] ?? ''))
  const algorithm = match && CHECKSUM_ALGORITHMS[match[1].toUpperCase()]
  if (!match || !algorithm || match[2].length !== algorithm.hexLength) return undefined
  const hex = match[2].toLowerCase()
  return { value: `${match[1].toUpperCase()}:${hex}`, hex, hash: createHash(algorithm.hash) }
}
