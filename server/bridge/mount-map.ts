import type { MountSetting } from '../shared/contracts/admin-settings.ts'
import { createPathMap, type PathMap } from './path-map.ts'

/**
 * One Nextcloud External Storage mount of the gateway's WebDAV: the folder
 * users see (`/Filecoin`) and the gateway folder behind it (`/{user}` when the
 * mount's root is per user, `/shared` for one folder everyone sees).
 */
export type { MountSetting }

export interface MountMap {
  readonly mounts: readonly MountSetting[]
  /** The gateway path of a canonical user path, or undefined when it lies on no mount. */
  toGateway(userId: string, userPath: string): string | undefined
  /** The mount points directly inside a user folder (`/Filecoin` in `/`). */
  pointsIn(userPath: string): string[]
}

const trimTrailing = (p: string) => (p.length > 1 ? p.replace(/\/+$/, '') : p)
const parentOf = (p: string) => p.slice(0, p.lastIndexOf('/')) || '/'

/**
 * @example createMountMap([{ mountPoint: '/Filecoin', gatewayPath: '/{user}' }]).toGateway('alice', '/Filecoin/a.txt') // '/alice/a.txt'
 */
export function createMountMap(mounts: readonly MountSetting[]): MountMap {
  // Longest mount point first, so a mount inside another mount wins.
  const entries: { point: string; map: PathMap }[] = mounts
    .map((m) => ({ point: trimTrailing(m.mountPoint), map: createPathMap(m.gatewayPath) }))
    .sort((a, b) => b.point.length - a.point.length)
  return {
    mounts,
    toGateway(userId, userPath) {
      for (const { point, map } of entries) {
        if (userPath === point) return map.toGateway(userId, '/')
        if (userPath.startsWith(point + '/')) return map.toGateway(userId, userPath.slice(point.length))
      }
      return undefined
    },
    pointsIn: (userPath) => entries.map((e) => e.point).filter((point) => parentOf(point) === userPath),
  }
}
