import { isDiskFull } from '../../../shared/disk.ts'
import type { MethodHandler } from '../context.ts'
import { badRequest, forbidden, notFound } from '../errors.ts'
import { requestPath } from '../paths.ts'
import { checkWrite, guardingLocks, requireTokens } from '../preconditions.ts'
import { header } from '../header.ts'

/** DELETE: a file, or a folder with everything below it; every lock in the way must be held. */
export const remove: MethodHandler = async (req, res, ctx) => {
  const { path } = requestPath(req)
  if (path === '/') throw forbidden('ROOT', 'The root folder cannot be deleted')
  const entry = await ctx.namespace.get(path)
  if (!entry) throw notFound()
  const depth = header(req, 'Depth')
  if (entry.kind === 'dir' && depth !== undefined && depth.toLowerCase() !== 'infinity') {
    throw badRequest('DELETE of a folder must have Depth: infinity')
  }
  const tokens = await checkWrite(req, ctx, path, 'tree')
  const removeAll = () =>
    ctx.atomically(async (t) => {
      // Another request may have locked something below since the check.
      await requireTokens(req, t, await guardingLocks(t, path, 'tree'), tokens)
      await t.namespace.remove(path)
      await t.props.removeTree(path)
      await t.locks.removeTree(path)
    })
  try {
    await removeAll()
  } catch (err) {
    // A full disk must not stop a person from deleting (how space is freed): the room held for it is given up, once.
    if (!isDiskFull(err) || !(await ctx.releaseRoomForDeletes?.())) throw err
    ctx.logger.warn({ path }, 'disk full: gave up the room held for deletes to record this one')
    await removeAll()
  }
  res.status(204).end()
}
