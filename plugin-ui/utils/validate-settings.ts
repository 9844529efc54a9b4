/**
 * Client-side checks of the gateway link form, mirroring what the bridge
 * enforces, so the admin sees mistakes before saving. The bridge stays the
 * authority: its errors are shown as well.
 */
import type { Network } from '../types.ts'

import { t } from '@nextcloud/l10n'

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

export const NETWORKS: readonly Network[] = ['simnet', 'mainnet', 'calibration']

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

export function validateLinkForm(form: LinkForm): LinkFormErrors {
  const errors: LinkFormErrors = {}

  const gatewayUrl = form.gatewayUrl.trim()
  if (gatewayUrl) {
    const problem = httpUrlProblem(gatewayUrl)
    if (problem === 'invalid') errors.gatewayUrl = t('gateway', 'Enter an http:// or https:// address.')
    if (problem === 'credentials') errors.gatewayUrl = t('gateway', 'Put the credentials in the user and password fields, not in the address.')
  }

  if (form.gatewayUser.includes(':')) {
    errors.gatewayUser = t('gateway', 'A user name for basic authentication cannot contain ":".')
  } else if (form.gatewayUser.length > 256) {
    errors.gatewayUser = t('gateway', 'The user name is too long.')
  }

  if (form.gatewayPassword.length > 1024) {
    errors.gatewayPassword = t('gateway', 'The password is too long.')
  }

  const pathMap = form.pathMap.trim()
  const segments = pathMap.split('/')
  const placeholders = pathMap.match(/\{[^}]*\}/g) ?? []
  if (!pathMap.startsWith('/')) {
    errors.pathMap = t('gateway', 'The path mapping must start with "/", for example /{user}.')
  } else if (segments.some((s) => s === '.' || s === '..') || /[\\\0]/.test(pathMap) || pathMap.includes('//')) {
    errors.pathMap = t('gateway', 'The path mapping cannot contain ".", "..", "//" or backslashes.')
  } else if (placeholders.some((p) => p !== '{user}') || /[{}]/.test(pathMap.replaceAll('{user}', ''))) {
    errors.pathMap = t('gateway', 'The only placeholder allowed is {user}.')
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
