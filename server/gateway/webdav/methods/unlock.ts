import type { MethodHandler } from '../context.ts'
import { badRequest, DavError } from '../errors.ts'
import { covers } from '../locks.ts'
import { requestPath } from '../paths.ts'
import { dav } from '../xml.ts'
import { header } from '../header.ts'

/**
 * UNLOCK with `Lock-Token: <token>`; a token that does not lock this URL is
 * 409 `lock-token-matches-request-uri`. The angle brackets may be missing, as
 * sabre/dav (Nextcloud's server) accepts: Windows' client and the `webdav`
 * library send the bare token.
 */
export const unlock: MethodHandler = async (req, res, ctx) => {
  const { path } = requestPath(req)
  const m = /^\s*<([^<>\s]+)>\s*$|^\s*([^<>\s]+)\s*$/.exec(header(req, 'Lock-Token') ?? '')
  if (!m) throw badRequest('UNLOCK needs a Lock-Token header: <token>')
  const lock = await ctx.locks.get(m[1] ?? m[2])
  if (!lock || !covers(lock, path)) {
    throw new DavError(409, 'LOCK_TOKEN_MISMATCH', 'No such lock on this resource', dav('lock-token-matches-request-uri'))
  }
  await ctx.locks.remove(lock.token)
  res.status(204).end()
}
