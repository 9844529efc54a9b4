import { createHash } from 'node:crypto'

/**
 * Which software a simulated provider runs, drawn from its id alone so that
 * every part of the simulation (and every process) agrees on it: about half
 * run Boost, half Curio. A Boost provider serves HTTP retrievals only if it
 * runs booster-http, which most do; Curio always serves them (curio
 * market/libp2p/libp2p.go handleNewTransportStream always lists http).
 */
export type ProviderKind = 'boost' | 'curio'

export interface ProviderProfile {
  kind: ProviderKind
  /** Whether the transports answer lists an http address and /ipfs, /piece are served. */
  servesHttpRetrieval: boolean
}

const draw = (providerId: string, label: string) =>
  createHash('sha256').update(`simnet-provider/${providerId}/${label}`).digest().readUIntBE(0, 6) / 2 ** 48

export function providerProfile(providerId: string): ProviderProfile {
  const kind: ProviderKind = draw(providerId, 'kind') < 0.5 ? 'boost' : 'curio'
  return { kind, servesHttpRetrieval: kind === 'curio' || draw(providerId, 'booster-http') < 0.8 }
}

/** A draw in [0, 1) for one event of one provider (e.g. one status request), stable under the same labels. */
export const providerDraw = (providerId: string, ...labels: (string | number)[]): number => draw(providerId, labels.join('/'))
