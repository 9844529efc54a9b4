import { FolderStatesRequestSchema, type FolderEntry, type FolderStatesResponse } from '../../shared/contracts/folder-states.ts'
import { sendJson } from '../../shared/json-response.ts'
import type { Authenticate, Caller } from '../auth/caller.ts'
import { folderEntryOfRecord, toFolderEntry } from '../convert.ts'
import { BridgeError } from '../errors.ts'
import type { GatewayClient } from '../gateway-client.ts'
import { normaliseUserPath, splitPath } from '../user-path.ts'
import { readOcsPost } from './ocs-post.ts'
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
    const { caller, body } = await readOcsPost(req, ctx, deps.authenticate, FolderStatesRequestSchema, BODY_LIMIT)
    const userPath = normaliseUserPath(body.folderPath, { encoding: 'literal', userId: caller.user.id })
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
