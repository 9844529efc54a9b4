/**
 * Every HTTP call the sidebar tab makes. The view never builds a URL: it calls
 * these functions and gets typed records or an ApiError.
 */
import type { FileRecord, Network, TabConfig } from '../types.ts'

import axios from '@nextcloud/axios'
import { generateOcsUrl } from '@nextcloud/router'
import { NETWORKS } from '../utils/network.ts'
import { ApiError, failedAnswer, invalidAnswer, toApiError } from './errors.ts'

export { ApiError } from './errors.ts'
export type { ApiErrorCode } from './errors.ts'

/** Without this header the bridge (like Nextcloud) answers 412 CSRF check failed. */
export const OCS_HEADERS = Object.freeze({ 'OCS-APIRequest': 'true' })

export interface RequestOptions {
  signal?: AbortSignal
}

export const fileMetadataUrl = () => generateOcsUrl('apps/gateway/get-file-metadata')
export const tabConfigUrl = () => generateOcsUrl('apps/gateway/config')

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null

/**
 * The storage record of a file or folder.
 *
 * @example
 * const file = await getFileMetadata('/Photos/cat.jpg')
 * file.details?.state // 'Staging'
 */
export async function getFileMetadata(filePath: string, options: RequestOptions = {}): Promise<FileRecord> {
  let data: unknown
  let status: number
  try {
    const res = await axios.post(fileMetadataUrl(), { filePath }, { headers: OCS_HEADERS, signal: options.signal })
    data = res.data
    status = res.status
  } catch (err) {
    throw toApiError(err)
  }
  if (!isObject(data)) throw invalidAnswer()
  if (data.success !== true) throw failedAnswer(data, status)
  const file = isObject(data.metadata) ? data.metadata.file : undefined
  if (!isObject(file) || typeof file.cid !== 'string') throw invalidAnswer()
  const details = file.details
  if (details !== undefined && (!isObject(details) || !Array.isArray(details.groups))) throw invalidAnswer()
  return file as unknown as FileRecord
}

/** Shown when the bridge cannot tell: no explorer or IPFS links rather than wrong ones. */
export const DEFAULT_TAB_CONFIG: Readonly<TabConfig> = Object.freeze({ network: 'simnet', ipfsGateway: '' })

/**
 * Network and link settings for any logged-in user. A bridge without this
 * route (older version) is not an error for the tab: it falls back to defaults.
 */
export async function getTabConfig(options: RequestOptions = {}): Promise<TabConfig> {
  try {
    const res = await axios.get(tabConfigUrl(), { headers: OCS_HEADERS, signal: options.signal })
    const config = isObject(res.data) && res.data.success === true && isObject(res.data.config) ? res.data.config : undefined
    if (!config) return { ...DEFAULT_TAB_CONFIG }
    const network = NETWORKS.includes(config.network as Network) ? (config.network as Network) : DEFAULT_TAB_CONFIG.network
    const ipfsGateway = typeof config.ipfsGateway === 'string' ? config.ipfsGateway.replace(/\/+$/, '') : ''
    const genesisTimestamp = typeof config.genesisTimestamp === 'number' ? config.genesisTimestamp : undefined
    const epochSeconds = typeof config.epochSeconds === 'number' && config.epochSeconds > 0 ? config.epochSeconds : undefined
    const speed = network === 'simnet' && typeof config.speed === 'string' ? config.speed.slice(0, 80) : undefined
    return { network, ipfsGateway, genesisTimestamp, epochSeconds, speed }
  } catch (err) {
    const error = toApiError(err)
    if (error.code === 'aborted') throw error
    return { ...DEFAULT_TAB_CONFIG }
  }
}

export function isApiError(err: unknown): err is ApiError {
  return err instanceof ApiError
}
