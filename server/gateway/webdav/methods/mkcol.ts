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
  if (await ctx.namespace.get(path)) throw exists()
  if ((await ctx.namespace.get(parentOf(path)))?.kind !== 'dir') throw conflict('The parent folder does not exist')
  const tokens = await checkWrite(req, ctx, path, 'bind')
  const made = await ctx.atomically(async (t) => {
    if (await t.namespace.get(path)) throw exists()
    if ((await t.namespace.get(parentOf(path)))?.kind !== 'dir') throw conflict('The parent folder does not exist')
    await requireTokens(req, t, await guardingLocks(t, path, 'bind'), tokens)
    await t.namespace.makeDir(path)
    return (await t.namespace.get(path))!
  })
  // Sync clients record the new folder's id from this header, as with Nextcloud.
  res
    .status(201)
    .set({ 'Content-Length': '0', 'OC-FileId': ocId(made.fileId, ctx.namespace.instanceId) })
    .end()
}
