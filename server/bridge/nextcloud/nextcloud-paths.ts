import type { Logger } from '../../shared/logger.ts'
import type { Caller } from '../auth/caller.ts'
import { CsrfError, BridgeError, notFound, unauthorized } from '../errors.ts'
import type { MountMap } from '../mount-map.ts'
import type { NextcloudClient } from './nextcloud-client.ts'

export const notOnMount = () =>
  new BridgeError(
    404,
    'NOT_ON_MOUNT',
    'This path is not on a Filecoin External Storage mount; ask your administrator to map the mount in the gateway settings',
  )

/**
 * FILESYNC=nextcloud: a user's path goes to the gateway only through an
 * External Storage mount the admin mapped, and only after Nextcloud itself
 * confirms (Depth 0 PROPFIND with the caller's credentials) that the path is
 * in this user's tree, so nobody reads metadata of a mount they cannot see.
 */
export function nextcloudGatewayPath(deps: { mounts: MountMap; client: NextcloudClient; logger: Logger }) {
  return async (caller: Caller, userPath: string): Promise<string> => {
    const userId = caller.user.id
    if (!caller.nextcloud) throw unauthorized()
    const gatewayPath = deps.mounts.toGateway(userId, userPath)
    if (gatewayPath === undefined) throw notOnMount()
    const seen = await deps.client.exists(caller.nextcloud, userId, userPath)
    if (seen === 'csrf') throw new CsrfError()
    if (seen === 'refused') {
      // The login passed cloud/user but Nextcloud's WebDAV refused it: a bad requesttoken, typically.
      deps.logger.warn({ user: userId }, "Nextcloud WebDAV refused the caller's credentials")
      throw new BridgeError(401, 'UNAUTHORIZED', 'Nextcloud refused access to this file with your session; reload the page')
    }
    if (!seen) throw notFound()
    return gatewayPath
  }
}
