/**
 * Maps a user's files tree onto the gateway's tree and back, from a template
 * such as `/{user}` (the default) or `/mounts/{user}/files`. User paths are
 * canonical (see user-path.ts), so the result always stays under the user's root.
 */
export interface PathMap {
  /** The gateway folder holding the user's files, e.g. `/alice`. */
  rootOf(userId: string): string
  toGateway(userId: string, userPath: string): string
  /** The user's path of a gateway path, or undefined when it lies outside the user's root. */
  toUser(userId: string, gatewayPath: string): string | undefined
}

export function createPathMap(template: string): PathMap {
  if (!template.startsWith('/')) throw new Error(`Path map "${template}" must start with "/"`)
  if (template.split('/').some((s) => s === '.' || s === '..' || s.includes('\\'))) {
    throw new Error(`Path map "${template}" may not contain "." or ".." segments or backslashes`)
  }
  const rootOf = (userId: string) => {
    const root = template.replaceAll('{user}', userId).split('/').filter(Boolean).join('/')
    return '/' + root
  }
  return {
    rootOf,
    toGateway(userId, userPath) {
      const root = rootOf(userId)
      if (userPath === '/' || userPath === '') return root
      return root === '/' ? userPath : root + userPath
    },
    toUser(userId, gatewayPath) {
      const root = rootOf(userId)
      const path = gatewayPath.length > 1 ? gatewayPath.replace(/\/+$/, '') : gatewayPath
      if (root === '/') return path || '/'
      if (path === root) return '/'
      return path.startsWith(root + '/') ? path.slice(root.length) : undefined
    },
  }
}
