import type { FileTarget } from '../types.ts'

interface LegacyFileInfo {
  path?: string
  name?: string
  type?: string
  isDirectory?: () => boolean
}

interface FilesNode {
  path: string
  basename: string
  type: string
}

function joinPath(dir: string, name: string): string {
  const base = dir.endsWith('/') ? dir : `${dir}/`
  return `${base.startsWith('/') ? '' : '/'}${base}${name}`
}

/**
 * What to ask the bridge about, from either host: a Nextcloud 29–32 FileInfo
 * (`path` is the parent folder, `type` 'dir'|'file') or a Nextcloud 33
 * `@nextcloud/files` node (`path` is the full path, `type` 'folder'|'file').
 */
export function toFileTarget(info: unknown): FileTarget | null {
  if (!info || typeof info !== 'object') return null
  const node = info as Partial<FilesNode>
  if (typeof node.basename === 'string' && typeof node.path === 'string') {
    return { filePath: node.path || '/', name: node.basename, isFolder: node.type === 'folder' }
  }
  const legacy = info as LegacyFileInfo
  if (typeof legacy.name !== 'string' || typeof legacy.path !== 'string') return null
  const isFolder = typeof legacy.isDirectory === 'function' ? legacy.isDirectory() : legacy.type === 'dir'
  return { filePath: legacy.name ? joinPath(legacy.path, legacy.name) : legacy.path || '/', name: legacy.name, isFolder }
}
