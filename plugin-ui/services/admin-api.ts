/**
 * The admin settings API the bridge serves (contract in plugin-ui/README.md).
 * Secrets go up, never down: the password is write-only and the bridge only
 * says whether one is set.
 */
import type { z } from 'zod'
import type {
  LinkCheck,
  LinkSettingsInput,
  LinkTestResult,
  MountSetting,
  PublicLinkSettings,
} from '../../server/shared/contracts/admin-settings.ts'
import type { Network } from '../types.ts'

import axios from '@nextcloud/axios'
import { generateOcsUrl } from '@nextcloud/router'
import { failedAnswer, invalidAnswer, toApiError } from './errors.ts'
import { OCS_HEADERS, tabConfigUrl } from './api.ts'
import { NETWORKS } from '../utils/network.ts'

/** A Nextcloud External Storage mount of the gateway and the gateway folder behind it (FILESYNC=nextcloud). */
export type { MountSetting, LinkTestResult, LinkCheck }

/** The saved link as the bridge shows it; `mounts` is absent from bridges that predate mounts. */
export type GatewayLinkSettings = Omit<PublicLinkSettings, 'mounts'> & { mounts?: MountSetting[] }

/** What a save sends: the password only when the admin typed a new one; without `mounts` the bridge keeps the saved ones. */
export type GatewayLinkUpdate = z.input<typeof LinkSettingsInput>

export const adminSettingsUrl = () => generateOcsUrl('apps/gateway/admin/settings')
export const testLinkUrl = () => generateOcsUrl('apps/gateway/admin/test-link')

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null

function readSettings(data: unknown, status: number): GatewayLinkSettings {
  if (!isObject(data)) throw invalidAnswer()
  if (data.success !== true) throw failedAnswer(data, status)
  const s = data.settings
  if (!isObject(s) || typeof s.gatewayUrl !== 'string' || typeof s.gatewayPasswordSet !== 'boolean') throw invalidAnswer()
  return {
    gatewayUrl: s.gatewayUrl,
    gatewayUser: typeof s.gatewayUser === 'string' ? s.gatewayUser : '',
    gatewayPasswordSet: s.gatewayPasswordSet,
    pathMap: typeof s.pathMap === 'string' ? s.pathMap : '',
    network: NETWORKS.includes(s.network as Network) ? (s.network as Network) : 'simnet',
    ipfsGateway: typeof s.ipfsGateway === 'string' ? s.ipfsGateway : '',
    ...(Array.isArray(s.mounts) ? { mounts: s.mounts.filter(isMount) } : {}),
  }
}

const isMount = (m: unknown): m is MountSetting => isObject(m) && typeof m.mountPoint === 'string' && typeof m.gatewayPath === 'string'

export async function getAdminSettings(): Promise<GatewayLinkSettings> {
  try {
    const res = await axios.get(adminSettingsUrl(), { headers: OCS_HEADERS })
    return readSettings(res.data, res.status)
  } catch (err) {
    throw toApiError(err)
  }
}

export async function saveAdminSettings(update: GatewayLinkUpdate): Promise<GatewayLinkSettings> {
  try {
    const res = await axios.put(adminSettingsUrl(), update, { headers: OCS_HEADERS })
    return readSettings(res.data, res.status)
  } catch (err) {
    throw toApiError(err)
  }
}

/** Asks the bridge to call the gateway with `link` (what the form holds, over the saved settings) and report what it answered. */
export async function testGatewayLink(link: Partial<GatewayLinkUpdate> = {}): Promise<LinkTestResult> {
  let data: unknown
  try {
    data = (await axios.post(testLinkUrl(), link, { headers: OCS_HEADERS })).data
  } catch (err) {
    throw toApiError(err)
  }
  if (!isObject(data) || typeof data.success !== 'boolean') throw invalidAnswer()
  return {
    success: data.success,
    status: typeof data.status === 'number' ? data.status : 0,
    message: typeof data.message === 'string' ? data.message : typeof data.error === 'string' ? data.error : '',
    latencyMs: typeof data.latencyMs === 'number' ? data.latencyMs : 0,
    ...(typeof data.warning === 'string' ? { warning: data.warning } : {}),
    ...(typeof data.dealsWarning === 'string' ? { dealsWarning: data.dealsWarning } : {}),
    ...(typeof data.dealKind === 'string' ? { dealKind: data.dealKind } : {}),
    ...(onchainCloudOf(data.onchainCloud) ?? {}),
    ...(dealMarketOf(data.dealMarket) ?? {}),
    ...(nextGroupOf(data.nextGroup) ?? {}),
    ...(Array.isArray(data.checks) ? { checks: data.checks.filter(isCheck) } : {}),
  }
}

const isCheck = (c: unknown): c is LinkCheck =>
  isObject(c) && typeof c.id === 'string' && typeof c.ok === 'boolean' && typeof c.sentence === 'string'

const ROUTE_PREFIX = '/ocs/v2.php/apps/gateway/'

/**
 * Browser → bridge: the route every Files page asks (`GET …/config`), from
 * this browser with its session, as the Files tab will. Only the bridge
 * answers it with `{ success: true, config }`; Nextcloud itself, reached when
 * the reverse proxy does not send the prefix to the bridge, answers 404 or a
 * page. Never throws.
 */
export async function checkBrowserRoute(): Promise<LinkCheck> {
  const fail = (what: string): LinkCheck => ({
    id: 'browser-ocs',
    ok: false,
    sentence: `Your browser's requests to ${ROUTE_PREFIX} do not reach the bridge (${what}): send that path to the bridge in the reverse proxy (scripts/nginx/gateway.conf).`,
  })
  try {
    const res = await axios.get(tabConfigUrl(), { headers: OCS_HEADERS })
    if (isObject(res.data) && res.data.success === true && isObject(res.data.config)) {
      return { id: 'browser-ocs', ok: true, sentence: `Your browser reaches the bridge at ${ROUTE_PREFIX}, as the Files tab will.` }
    }
    return fail(`HTTP ${res.status}, not the bridge's answer`)
  } catch (err) {
    const error = toApiError(err)
    return fail(error.status ? `HTTP ${error.status}` : error.message)
  }
}

/** Where the next group goes, route by route; an entry that is not what the bridge sends is left out. */
function nextGroupOf(value: unknown): Pick<LinkTestResult, 'nextGroup'> | undefined {
  if (!Array.isArray(value)) return undefined
  const plans = value.flatMap((p: unknown) => {
    if (!isObject(p) || typeof p.route !== 'string' || typeof p.copies !== 'number' || typeof p.why !== 'string') return []
    return [{ route: p.route, copies: p.copies, why: p.why, ...(typeof p.price === 'string' ? { price: p.price } : {}) }]
  })
  return plans.length > 0 ? { nextGroup: plans } : undefined
}

/** What pays for deal-market copies, kept only when every field is what the bridge sends. */
function dealMarketOf(value: unknown): Pick<LinkTestResult, 'dealMarket'> | undefined {
  if (!isObject(value)) return undefined
  const { dataCap, escrow, locked, dealsUntil } = value
  if ((dataCap !== null && typeof dataCap !== 'string') || typeof escrow !== 'string' || typeof locked !== 'string') return undefined
  if (dealsUntil !== undefined && (typeof dealsUntil !== 'string' || Number.isNaN(Date.parse(dealsUntil)))) return undefined
  return { dealMarket: { dataCap, escrow, locked, ...(dealsUntil === undefined ? {} : { dealsUntil }) } }
}

/** The Onchain Cloud account's standing, kept only when every field is what the bridge sends. */
function onchainCloudOf(value: unknown): Pick<LinkTestResult, 'onchainCloud'> | undefined {
  if (!isObject(value)) return undefined
  const { status, funds, fundedUntil, fundedDays } = value
  if (
    (status !== 'HEALTHY' && status !== 'WARNING' && status !== 'DEFICIT') ||
    typeof funds !== 'string' ||
    typeof fundedUntil !== 'string' ||
    Number.isNaN(Date.parse(fundedUntil))
  )
    return undefined
  return { onchainCloud: { status, funds, fundedUntil, ...(typeof fundedDays === 'number' && fundedDays >= 0 ? { fundedDays } : {}) } }
}
