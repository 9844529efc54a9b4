import { FolderStatesRequestSchema, type FolderEntry, type FolderStatesResponse } from '../../shared/contracts/folder-states.ts'
import { describeIssues } from '../../shared/contracts/zod-issues.ts'
import { isJsonContentType, readJsonBody } from '../../shared/json-body.ts'
import { sendJson } from '../../shared/json-response.ts'
import type { Authenticate, Caller } from '../auth/caller.ts'
import { folderEntryOfRecord, toFolderEntry } from '../convert.ts'
import { BridgeError, badRequest, unauthorized } from '../errors.ts'
import type { GatewayClient } from '../gateway-client.ts'
import { checkOcsApiRequest } from '../ocs-guards.ts'
import { normaliseUserPath, splitPath } from '../user-path.ts'
import type { BridgeRoute } from '../fast-lane.ts'

export const FOLDER_STATES_ROUTE = '/ocs/v2.php/apps/gateway/get-folder-states'
const BODY_LIMIT = 64 * 1024

export interface FolderStatesDeps {
  authenticate: Authenticate
  gateway: GatewayClient
  /** Where a caller's path lives on the gateway; throws (404) for a path the caller may not ask about. */
  toGatewayPath: (caller: Caller, userPath: string) => Promise<string>
  /**
   * The mount points directly inside a user folder that lies on no mount
   * (FILESYNC=nextcloud: `/Filecoin` in the user's root); none by default.
   */
  mountPointsIn?: (caller: Caller, userPath: string) => string[]
  /** Where retrievable entries open on IPFS, when the linked network publishes data; undefined otherwise. */
  ipfsGateway: () => string | undefined
}

/**
 * `POST /ocs/v2.php/apps/gateway/get-folder-states`: the badges of one Files
 * listing in one request, checked in the metadata route's order (auth →
 * throttle → CSRF → body → path). A folder the gateway does not know, or a
 * gateway without folder states, answers no entries: the list shows no badges.
 */
export function createFolderStatesRoute(deps: FolderStatesDeps): BridgeRoute {
  return async (req, res, ctx) => {
    const caller = await deps.authenticate({ method: req.method ?? 'POST', headers: req.headers, address: ctx.address })
    if (!caller) throw unauthorized()
    ctx.caller = caller
    checkOcsApiRequest(req.headers)
    if (!isJsonContentType(req.headers['content-type'])) throw badRequest('Content-Type must be application/json')
    const body = FolderStatesRequestSchema.safeParse(await readJsonBody(req, { limit: BODY_LIMIT }))
    if (!body.success) throw badRequest(describeIssues(body.error.issues))
    const userPath = normaliseUserPath(body.data.folderPath, { encoding: 'literal', userId: caller.user.id })
    const ipfsGateway = deps.ipfsGateway()
    const answer: FolderStatesResponse = {
      success: true,
      folder: { path: userPath, entries: await entriesOf(caller, userPath), ...(ipfsGateway ? { ipfsGateway } : {}) },
    }
    sendJson(res, 200, answer)
  }

  async function entriesOf(caller: Caller, userPath: string): Promise<FolderEntry[]> {
    let gatewayPath: string
    try {
      gatewayPath = await deps.toGatewayPath(caller, userPath)
    } catch (err) {
      if (!(err instanceof BridgeError) || err.status !== 404) throw err
      return mountPointEntries(caller, userPath)
    }
    return (await deps.gateway.folderStates(gatewayPath))?.map(toFolderEntry) ?? []
  }

  /** A folder on no mount shows badges only on the mount points inside it, each from its own record. */
  async function mountPointEntries(caller: Caller, userPath: string): Promise<FolderEntry[]> {
    const entries: FolderEntry[] = []
    for (const point of deps.mountPointsIn?.(caller, userPath) ?? []) {
      try {
        entries.push(folderEntryOfRecord(splitPath(point)[1], await deps.gateway.fileInfo(await deps.toGatewayPath(caller, point))))
      } catch (err) {
        // A mount the caller cannot see, or not on the gateway yet: no badge, like any unknown entry.
        if (!(err instanceof BridgeError) || err.status !== 404) throw err
      }
    }
    return entries
  }
}
