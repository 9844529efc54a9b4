/**
 * Client-side checks of the gateway link form, mirroring what the bridge
 * enforces, so the admin sees mistakes before saving. The bridge stays the
 * authority: its errors are shown as well.
 */
import type { Network } from '../types.ts'

import { t } from '@nextcloud/l10n'
import { NETWORKS } from './network.ts'

export interface LinkForm {
  gatewayUrl: string
  gatewayUser: string
  /** Empty means "keep the saved password". */
  gatewayPassword: string
  pathMap: string
  network: Network | string
  ipfsGateway: string
}

export type LinkFormErrors = Partial<Record<keyof LinkForm, string>>

/** One row of the External Storage mount list: the Nextcloud folder and the gateway folder behind it. */
export interface MountRow {
  mountPoint: string
  gatewayPath: string
}

export type MountRowErrors = Partial<Record<keyof MountRow, string>>

export interface MountListErrors {
  /** Same order and length as the rows checked. */
  rows: MountRowErrors[]
  /** About the list as a whole (too many rows). */
  list?: string
}

/** The bridge refuses more (server/shared/contracts/admin-settings.ts). */
export const MAX_MOUNTS = 50
const MAX_PATH_LENGTH = 1024

export { NETWORKS }

function httpUrlProblem(value: string): 'invalid' | 'credentials' | undefined {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return 'invalid'
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'invalid'
  if (url.username || url.password) return 'credentials'
  return undefined
}

type PathProblem = 'start' | 'unsafe' | 'placeholder' | 'long'

/** The path mapping rules, shared by the path mapping and each mount's gateway path. */
function pathMapProblem(value: string): PathProblem | undefined {
  const segments = value.split('/')
  const placeholders = value.match(/\{[^}]*\}/g) ?? []
  if (!value.startsWith('/')) return 'start'
  if (segments.some((s) => s === '.' || s === '..') || /[\\\0]/.test(value) || value.includes('//')) return 'unsafe'
  if (placeholders.some((p) => p !== '{user}') || /[{}]/.test(value.replaceAll('{user}', ''))) return 'placeholder'
  if (value.length > MAX_PATH_LENGTH) return 'long'
  return undefined
}

/** As the bridge stores a mount point: trimmed, without trailing slashes. */
export const normalizeMountPoint = (value: string) => value.trim().replace(/\/+$/, '')

function mountPointProblem(value: string): string | undefined {
  if (value === '') return t('gateway', 'Required: the folder users see, for example /Filecoin.')
  const bare = value.replace(/\/+$/, '')
  if (!value.startsWith('/')) return t('gateway', 'The mount point must start with "/", for example /Filecoin.')
  if (bare === '') return t('gateway', "The mount point must name a folder, not the root of the user's files.")
  if (/[\\\x00-\x1f\x7f]/.test(value) || bare.includes('//') || value.split('/').some((s) => s === '.' || s === '..')) {
    return t('gateway', 'The mount point cannot contain ".", "..", "//", backslashes or control characters.')
  }
  if (value.length > MAX_PATH_LENGTH) return t('gateway', 'The mount point is too long.')
  return undefined
}

function gatewayPathProblem(value: string): string | undefined {
  if (value === '') return t('gateway', 'Required: the gateway folder behind the mount, for example /{user}.')
  switch (pathMapProblem(value)) {
    case 'start':
      return t('gateway', 'The gateway path must start with "/", for example /{user} or /shared.')
    case 'unsafe':
      return t('gateway', 'The gateway path cannot contain ".", "..", "//" or backslashes.')
    case 'placeholder':
      return t('gateway', 'The only placeholder allowed is {user}.')
    case 'long':
      return t('gateway', 'The gateway path is too long.')
    default:
      return undefined
  }
}

/**
 * Checks the External Storage mount list. An empty list is valid: the path
 * mapping then applies to every path.
 */
export function validateMounts(mounts: readonly MountRow[]): MountListErrors {
  const seen = new Set<string>()
  const rows = mounts.map((mount): MountRowErrors => {
    const errors: MountRowErrors = {}
    const mountPoint = mount.mountPoint.trim()
    const pointProblem = mountPointProblem(mountPoint)
    if (pointProblem) {
      errors.mountPoint = pointProblem
    } else if (seen.has(normalizeMountPoint(mountPoint))) {
      errors.mountPoint = t('gateway', 'This mount point is already in the list.')
    }
    seen.add(normalizeMountPoint(mountPoint))
    const pathProblem = gatewayPathProblem(mount.gatewayPath.trim())
    if (pathProblem) errors.gatewayPath = pathProblem
    return errors
  })
  const result: MountListErrors = { rows }
  if (mounts.length > MAX_MOUNTS) result.list = t('gateway', 'At most {max} mounts can be mapped.', { max: MAX_MOUNTS })
  return result
}

export const hasMountErrors = (errors: MountListErrors) => Boolean(errors.list) || errors.rows.some((row) => Object.keys(row).length > 0)

export function validateLinkForm(form: LinkForm): LinkFormErrors {
  const errors: LinkFormErrors = {}

  const gatewayUrl = form.gatewayUrl.trim()
  if (gatewayUrl) {
    const problem = httpUrlProblem(gatewayUrl)
    if (problem === 'invalid') errors.gatewayUrl = t('gateway', 'Enter an http:// or https:// address.')
    if (problem === 'credentials')
      errors.gatewayUrl = t('gateway', 'Put the credentials in the user and password fields, not in the address.')
  }

  if (form.gatewayUser.includes(':')) {
    errors.gatewayUser = t('gateway', 'A user name for basic authentication cannot contain ":".')
  } else if (form.gatewayUser.length > 256) {
    errors.gatewayUser = t('gateway', 'The user name is too long.')
  }

  if (form.gatewayPassword.length > 1024) {
    errors.gatewayPassword = t('gateway', 'The password is too long.')
  }

  if (form.pathMap.trim() === '') errors.pathMap = t('gateway', 'Required: the gateway folder of each user, for example /{user}.')
  else
    switch (pathMapProblem(form.pathMap.trim())) {
      case 'start':
        errors.pathMap = t('gateway', 'The path mapping must start with "/", for example /{user}.')
        break
      case 'unsafe':
        errors.pathMap = t('gateway', 'The path mapping cannot contain ".", "..", "//" or backslashes.')
        break
      case 'placeholder':
        errors.pathMap = t('gateway', 'The only placeholder allowed is {user}.')
        break
      case 'long':
        errors.pathMap = t('gateway', 'The path mapping is too long.')
        break
    }

  if (!NETWORKS.includes(form.network as Network)) {
    errors.network = t('gateway', 'Choose a network.')
  }

  const ipfsGateway = form.ipfsGateway.trim()
  if (ipfsGateway && httpUrlProblem(ipfsGateway)) {
    errors.ipfsGateway = t('gateway', 'Enter an http:// or https:// address, or leave empty for no IPFS links.')
  }

  return errors
}
