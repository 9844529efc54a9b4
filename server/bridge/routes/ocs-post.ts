import type { IncomingMessage } from 'node:http'
import type { z } from 'zod'
import { describeIssues } from '../../shared/contracts/zod-issues.ts'
import { isJsonContentType, readJsonBody } from '../../shared/json-body.ts'
import type { Authenticate, Caller } from '../auth/caller.ts'
import { badRequest, unauthorized } from '../errors.ts'
import type { RequestContext } from '../fast-lane.ts'
import { checkOcsApiRequest } from '../ocs-guards.ts'

/**
 * What every polled OCS route checks before its own work, in Nextcloud's
 * order: auth (and the throttle behind it) → CSRF (`OCS-APIRequest`) → a
 * JSON body of at most `limit` bytes → its schema. Failures are thrown as
 * BridgeErrors for the one error writer.
 */
export async function readOcsPost<S extends z.ZodType>(
  req: IncomingMessage,
  ctx: RequestContext,
  authenticate: Authenticate,
  schema: S,
  limit: number,
): Promise<{ caller: Caller; body: z.infer<S> }> {
  const caller = await authenticate({ method: req.method ?? 'POST', headers: req.headers, address: ctx.address })
  if (!caller) throw unauthorized()
  ctx.caller = caller
  checkOcsApiRequest(req.headers)
  if (!isJsonContentType(req.headers['content-type'])) throw badRequest('Content-Type must be application/json')
  const body = schema.safeParse(await readJsonBody(req, { limit }))
  if (!body.success) throw badRequest(describeIssues(body.error.issues))
  return { caller, body: body.data }
}
