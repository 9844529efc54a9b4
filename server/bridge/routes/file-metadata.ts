import express, { Router, type RequestHandler, type Response } from 'express'
import { z } from 'zod'
import type { NetworkClock } from '../../shared/epochs.ts'
import { currentUser } from '../auth/basic-auth.ts'
import { toMetadataFile } from '../convert.ts'
import { CsrfError, badRequest, setSurface } from '../errors.ts'
import type { GatewayClient } from '../gateway-client.ts'
import type { PathMap } from '../path-map.ts'
import { MAX_PATH_LENGTH, normaliseUserPath } from '../user-path.ts'

export const FILE_METADATA_ROUTE = '/ocs/v2.php/apps/gateway/get-file-metadata'
const BODY_LIMIT = '1mb'

export const MetadataRequestSchema = z.strictObject({
  filePath: z.string().min(1).max(MAX_PATH_LENGTH),
})

export interface FileMetadataDeps {
  auth: RequestHandler
  gateway: GatewayClient
  pathMap: PathMap
  clock: NetworkClock
  /**
   * Where a user's path lives on the gateway; throws (404) for a path the
   * user may not ask about. Default: the path map over the whole tree.
   */
  toGatewayPath?: (res: Response, userId: string, userPath: string) => Promise<string>
}

/** Nextcloud's CSRF rule for API clients without a session: they must say `OCS-APIRequest: true`. */
const requireOcsApiRequest: RequestHandler = (req, _res, next) => {
  if (String(req.headers['ocs-apirequest'] ?? '').toLowerCase() !== 'true') throw new CsrfError()
  next()
}

const requireJson: RequestHandler = (req, _res, next) => {
  if (!req.is('application/json')) throw badRequest('Content-Type must be application/json')
  next()
}

/**
 * `POST /ocs/v2.php/apps/gateway/get-file-metadata`: checks in the order
 * auth → throttle → CSRF → body → path, then reads the gateway's record
 * and answers it converted, bare (no OCS envelope), as the real app does.
 */
export function createFileMetadataRouter(deps: FileMetadataDeps): Router {
  const router = Router()
  router.post(
    FILE_METADATA_ROUTE,
    (req, _res, next) => {
      setSurface(req, 'app')
      next()
    },
    deps.auth,
    requireOcsApiRequest,
    requireJson,
    express.json({ limit: BODY_LIMIT }),
    async (req, res) => {
      const body = MetadataRequestSchema.safeParse(req.body)
      if (!body.success) throw badRequest(describeBodyProblem(body.error))
      const user = currentUser(res)
      const userPath = normaliseUserPath(body.data.filePath, { decode: 'lenient', userId: user.id })
      const gatewayPath = deps.toGatewayPath ? await deps.toGatewayPath(res, user.id, userPath) : deps.pathMap.toGateway(user.id, userPath)
      const record = await deps.gateway.fileInfo(gatewayPath)
      res.json({ success: true, metadata: { file: toMetadataFile(record, userPath, deps.clock) } })
    },
  )
  return router
}

/** A short, fixed message per problem: never raw zod text. */
function describeBodyProblem(error: z.ZodError): string {
  const issue = error.issues[0]
  if (!issue) return 'Invalid request body'
  if (issue.code === 'unrecognized_keys') return `Unknown field(s): ${issue.keys.join(', ')}; only filePath is accepted`
  if (issue.path[0] === 'filePath') {
    if (issue.code === 'invalid_type') return issue.input === undefined ? 'filePath is required' : 'filePath must be a string'
    if (issue.code === 'too_small') return 'filePath must not be empty'
    if (issue.code === 'too_big') return `filePath is longer than ${MAX_PATH_LENGTH} characters`
  }
  return 'Request body must be a JSON object { "filePath": string }'
}
