/**
 * Facts about each network: where its block explorer is and when its epoch 0
 * was. The simulated network has neither a public explorer nor a fixed genesis.
 */
import type { Deal, Network } from '../types.ts'

/** Every network the bridge may name (the contract's list; test/plugin-ui/contract-types.test-d.ts checks none is missing). */
export const NETWORKS: readonly Network[] = ['simnet', 'mainnet', 'calibration', 'devnet']

const EPOCH_SECONDS = 30

const GENESIS: Partial<Record<Network, number>> = {
  mainnet: 1598306400,
  calibration: 1667326380,
}

const FILFOX: Partial<Record<Network, string>> = {
  mainnet: 'https://filfox.info/en',
  calibration: 'https://calibration.filfox.info/en',
}

export function providerExplorerUrl(network: Network, provider: string): string | undefined {
  const base = FILFOX[network]
  return base ? `${base}/address/${encodeURIComponent(provider)}` : undefined
}

export function dealExplorerUrl(network: Network, dealId: number | string): string | undefined {
  const base = FILFOX[network]
  return base ? `${base}/deal/${encodeURIComponent(String(dealId))}` : undefined
}

/** Unix seconds of an epoch; undefined when the genesis is not known. A sped-up simulated network has shorter epochs. */
export function epochToUnix(epoch: number, network: Network, genesisTimestamp?: number, epochSeconds = EPOCH_SECONDS): number | undefined {
  const genesis = genesisTimestamp ?? GENESIS[network]
  return genesis === undefined ? undefined : Math.floor(genesis + epoch * epochSeconds)
}

/**
 * When a deal ends, unix seconds: a PDP copy's as the gateway dated it (on the Onchain Cloud chain's own
 * clock, which need not be the network's), else its end epoch on the network's clock.
 */
export function dealEndUnix(
  deal: Pick<Deal, 'endEpoch' | 'endTimestamp'>,
  network: Network,
  genesisTimestamp?: number,
  epochSeconds?: number,
): number | undefined {
  return deal.endTimestamp ?? epochToUnix(deal.endEpoch, network, genesisTimestamp, epochSeconds)
}

/** `https://ipfs.io/ipfs/<cid>`, or undefined when no IPFS gateway is configured. */
export function ipfsUrl(ipfsGateway: string, cid: string): string | undefined {
  if (!ipfsGateway) return undefined
  return `${ipfsGateway.replace(/\/+$/, '')}/ipfs/${encodeURIComponent(cid)}`
}
