import { MetadataRequestSchema, type MetadataResponse } from '../../shared/contracts/metadata-record.ts'
import type { NetworkClock } from '../../shared/epochs.ts'
import { sendJson } from '../../shared/json-response.ts'
import type { Authenticate, Caller } from '../auth/caller.ts'
import { toMetadataFile } from '../convert.ts'
import type { BridgeRoute } from '../fast-lane.ts'
import type { GatewayClient } from '../gateway-client.ts'
import type { PathMap } from '../path-map.ts'
import { normaliseUserPath } from '../user-path.ts'
import { readOcsPost } from './ocs-post.ts'

export const FILE_METADATA_ROUTE = '/ocs/v2.php/apps/gateway/get-file-metadata'
const BODY_LIMIT = 1024 * 1024

export interface FileMetadataDeps {
  authenticate: Authenticate
  gateway: GatewayClient
  pathMap: PathMap
  clock: NetworkClock
  /**
   * Where a caller's path lives on the gateway; throws (404) for a path the
   * caller may not ask about. Default: the path map over the whole tree.
   */
  toGatewayPath?: (caller: Caller, userPath: string) => Promise<string>
}

/**
 * `POST /ocs/v2.php/apps/gateway/get-file-metadata`: checks in the order
 * auth → throttle → CSRF → body → path, then reads the gateway's record
 * and answers it converted, bare (no OCS envelope), as the real app does.
 * Served on node's own request and response (see fast-lane.ts); failures
 * are thrown as BridgeErrors for the one error writer.
 */
export function createFileMetadataRoute(deps: FileMetadataDeps): BridgeRoute {
  const toGatewayPath = deps.toGatewayPath ?? (async (caller: Caller, userPath: string) => deps.pathMap.toGateway(caller.user.id, userPath))
  return async (req, res, ctx) => {
    const { caller, body } = await readOcsPost(req, ctx, deps.authenticate, MetadataRequestSchema, BODY_LIMIT)
    const userPath = normaliseUserPath(body.filePath, { encoding: 'literal', userId: caller.user.id })
    const record = await deps.gateway.fileInfo(await toGatewayPath(caller, userPath))
    const answer: MetadataResponse = { success: true, metadata: { file: toMetadataFile(record, userPath, deps.clock) } }
    sendJson(res, 200, answer)
  }
}
