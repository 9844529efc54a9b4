import { parentOf } from '../../namespace.ts'
import { hasBody } from '../body.ts'
import type { MethodHandler } from '../context.ts'
import { conflict, DavError } from '../errors.ts'
import { requestPath } from '../paths.ts'
import { checkWrite, guardingLocks, requireTokens } from '../preconditions.ts'
import { ocId } from '../props.ts'

const exists = () => new DavError(405, 'ALREADY_EXISTS', 'Something already exists at this path')

/** MKCOL: one new, empty folder whose parent exists (RFC 4918 §9.3). Bodies are not supported (415). */
export const mkcol: MethodHandler = async (req, res, ctx) => {
  const { path } = requestPath(req)
  if (hasBody(req)) throw new DavError(415, 'UNSUPPORTED_MEDIA_TYPE', 'MKCOL with a body is not supported')
  if (ctx.namespace.get(path)) throw exists()
  if (ctx.namespace.get(parentOf(path))?.kind !== 'dir') throw conflict('The parent folder does not exist')
  const tokens = checkWrite(req, ctx, path, 'bind')
  ctx.namespace.transaction(() => {
    if (ctx.namespace.get(path)) throw exists()
    if (ctx.namespace.get(parentOf(path))?.kind !== 'dir') throw conflict('The parent folder does not exist')
    requireTokens(req, ctx, guardingLocks(ctx, path, 'bind'), tokens)
    ctx.namespace.makeDir(path)
  })
  // Sync clients record the new folder's id from this header, as with Nextcloud.
  res.status(201).set({ 'Content-Length': '0', 'OC-FileId': ocId(ctx.namespace.get(path)!.fileId, ctx.namespace.instanceId) }).end()
}
