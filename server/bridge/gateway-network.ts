import type { NetworkName } from '../shared/contracts/network.ts'
import { askGatewayStatus } from './gateway-status.ts'
import type { EffectiveLink } from './settings-store.ts'

/** How long a gateway's word on its network is taken before it is asked again. */
export const NETWORK_REASK_MS = 60_000
const UNANSWERED_REASK_MS = 5_000

/**
 * The network the linked gateway says it serves (`POST /status`); null when
 * it answers without naming one (CIDgravity's gateway has no such route),
 * undefined when it cannot be reached. Never throws.
 */
export async function askGatewayNetwork(link: EffectiveLink): Promise<NetworkName | null | undefined> {
  const status = await askGatewayStatus(link)
  return status === undefined ? undefined : (status?.network ?? null)
}

/**
 * What the app shows as the network (issue 38): the gateway's own word, kept
 * and asked again every NETWORK_REASK_MS, so that a label an admin saves
 * never presents one network as another; the admin's setting only names the
 * network of a gateway that does not say. A new gateway address or account
 * forgets the previous gateway's word.
 */
export interface ReportedNetwork {
  /** The network to show and to date epochs by for this link. */
  of(link: EffectiveLink): NetworkName
  /** The gateway's own word, when it gave one; undefined before its first answer or when it does not say. */
  reported(link: EffectiveLink): NetworkName | undefined
  /** Asks the gateway now (the first answer, or after a save) and resolves once it answered. */
  refresh(link: EffectiveLink): Promise<NetworkName | undefined>
}

export function createReportedNetwork(
  ask: (link: EffectiveLink) => Promise<NetworkName | null | undefined> = askGatewayNetwork,
  now: () => number = Date.now,
): ReportedNetwork {
  let known: { key: string; network?: NetworkName; answered?: boolean; at: number; asking?: Promise<NetworkName | undefined> } | undefined
  const keyOf = (link: EffectiveLink) => JSON.stringify([link.url, link.user ?? ''])
  const refresh = (link: EffectiveLink) => {
    const key = keyOf(link)
    if (known?.key !== key) known = { key, at: 0 }
    const entry = known
    entry.asking ??= ask(link).then((answer) => {
      const network = answer ?? undefined
      entry.network = network
      entry.answered = answer !== undefined
      entry.at = now()
      entry.asking = undefined
      return network
    })
    return entry.asking
  }
  const reported = (link: EffectiveLink) => {
    // A gateway that did not answer is asked again sooner than one that did.
    const reaskMs = known?.answered ? NETWORK_REASK_MS : UNANSWERED_REASK_MS
    if (known?.key !== keyOf(link) || now() - known.at >= reaskMs) void refresh(link)
    return known?.key === keyOf(link) ? known.network : undefined
  }
  return { reported, of: (link) => reported(link) ?? link.network, refresh }
}
