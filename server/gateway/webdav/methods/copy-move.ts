import type { Request } from 'express'
import { parentOf } from '../../namespace.ts'
import type { DavStores, MethodHandler } from '../context.ts'
import { badRequest, conflict, forbidden, notFound, preconditionFailed } from '../errors.ts'
import { headerPath, isWithin, requestPath } from '../paths.ts'
import { checkConditions, guardingLocks, quoteEtag, requireTokens } from '../preconditions.ts'
import { ocId } from '../props.ts'
import { header } from '../header.ts'

/**
 * COPY and MOVE (RFC 4918 §9.8, §9.9). Dead properties travel with the
 * resource; locks do not (a moved-away resource loses its locks, a copy
 * starts unlocked). An existing destination is deleted first when
 * `Overwrite` allows it.
 */
function transfer(kind: 'COPY' | 'MOVE'): MethodHandler {
  return async (req, res, ctx) => {
    const { path: from } = requestPath(req)
    const destination = header(req, 'Destination')
    if (!destination) throw badRequest('Destination header is required')
    const { path: to } = headerPath(req, destination)
    const deep = depthOf(req, kind)
    const overwrite = overwriteOf(req)

    const source = await ctx.namespace.get(from)
    if (!source) throw notFound()
    if (from === to) throw forbidden('SAME_RESOURCE', 'Source and destination are the same')
    if (isWithin(to, from)) throw forbidden('DESTINATION_INSIDE_SOURCE', 'Cannot copy or move a folder into itself')
    if (isWithin(from, to)) throw forbidden('DESTINATION_CONTAINS_SOURCE', 'Cannot overwrite a folder that contains the source')
    if ((await ctx.namespace.get(parentOf(to)))?.kind !== 'dir') throw conflict('The destination folder does not exist')
    const existing = await ctx.namespace.get(to)
    if (existing && !overwrite) throw preconditionFailed('Destination exists and Overwrite is F')

    const tokens = await checkConditions(req, ctx, from)
    const guard = async (t: DavStores) => {
      if (kind === 'MOVE') await requireTokens(req, t, await guardingLocks(t, from, 'tree'), tokens)
      await requireTokens(req, t, await guardingLocks(t, to, (await t.namespace.get(to)) ? 'tree' : 'bind'), tokens)
    }
    await guard(ctx)

    const moved = await ctx.atomically(async (t) => {
      await guard(t)
      if (await t.namespace.get(to)) {
        await t.namespace.remove(to)
        await t.props.removeTree(to)
        await t.locks.removeTree(to)
      }
      if (kind === 'COPY') {
        await t.namespace.copy(from, to, deep)
        await t.props.copy(from, to, deep)
      } else {
        await t.namespace.move(from, to)
        await t.props.move(from, to)
        await t.locks.removeTree(from)
      }
      return t.namespace.get(to)
    })
    res
      .status(existing ? 204 : 201)
      .set({
        'Content-Length': '0',
        ...(moved ? { 'OC-FileId': ocId(moved.fileId, ctx.namespace.instanceId), ETag: quoteEtag(moved.etag) } : {}),
      })
      .end()
  }
}

/** COPY takes Depth 0 or infinity (the default); MOVE only infinity. */
function depthOf(req: Request, kind: 'COPY' | 'MOVE'): boolean {
  const depth = header(req, 'Depth')?.trim().toLowerCase()
  if (depth === undefined || depth === 'infinity') return true
  if (depth === '0' && kind === 'COPY') return false
  throw badRequest(kind === 'COPY' ? 'Depth must be 0 or infinity' : 'MOVE requires Depth: infinity')
}

function overwriteOf(req: Request): boolean {
  const value = header(req, 'Overwrite')?.trim().toUpperCase()
  if (value === undefined || value === 'T') return true
  if (value === 'F') return false
  throw badRequest('Overwrite must be T or F')
}

export const copy = transfer('COPY')
export const move = transfer('MOVE')
