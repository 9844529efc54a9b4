import type { NetworkName } from '../../shared/contracts/network.ts'

/**
 * The name a node of each public network reports (`Filecoin.StateNetworkName`,
 * which Lotus also puts in StateGetNetworkParams' NetworkName: lotus
 * node/impl/full/state.go). It is the init actor's name: mainnet's was set to
 * "mainnet" at the Liftoff upgrade (lotus chain/consensus/filcns/upgrades.go,
 * UpgradeLiftoff); calibration's genesis names it "calibrationnet", as its
 * actor bundle is named (lotus build/buildconstants/params_calibnet.go,
 * NetworkBundle). A devnet's is whatever its genesis said: `lotus-seed genesis
 * new` makes "localnet-<uuid>" (lotus cmd/lotus-seed/genesis.go), Lotus's
 * test ensembles "testing", our simulated chain "simnet".
 */
export const PUBLIC_NETWORK_NAMES = { mainnet: 'mainnet', calibration: 'calibrationnet' } as const

/**
 * Why a node that reports `reported` cannot be NETWORK=`network`'s, or null
 * when it can: mainnet and calibration must see their own name, a devnet any
 * name but theirs (test keys, a loopback transfer URL and small groups are no
 * settings for a public network).
 */
export function networkNameMismatch(network: NetworkName, reported: string, url: string): string | null {
  if (network === 'simnet') return null
  if (network === 'devnet') {
    const publicOne = Object.entries(PUBLIC_NETWORK_NAMES).find(([, name]) => name === reported)?.[0]
    return publicOne
      ? `NETWORK: devnet, but the node at ${url} is on ${publicOne} (it reports network name "${reported}"); set NETWORK=${publicOne}, or point LOTUS_URL at a devnet's node`
      : null
  }
  const expected = PUBLIC_NETWORK_NAMES[network]
  if (reported === expected) return null
  const other = Object.entries(PUBLIC_NETWORK_NAMES).find(([, name]) => name === reported)?.[0] ?? 'devnet'
  return `NETWORK: ${network}, but the node at ${url} reports network name "${reported}" (${network}'s is "${expected}"); set NETWORK=${other}, or point LOTUS_URL at a ${network} node`
}
