import { devnet, type Chain } from '@filoz/synapse-core/chains'
import type { LocalAccount } from 'viem'
import { FOC_CHAIN_IDS, focChain } from '../../../server/network/foc/chain.ts'
import { connectFocClient, type FocClient, type FocClientOptions } from '../../../server/network/foc/client.ts'
import type { FocAddresses } from '../../../server/simulation/simfoc/contracts/deploy.ts'

/** A simulated Onchain Cloud as the tests know it: where it serves and where it deployed. */
interface RunningFoc {
  rpcUrl: string
  contracts: FocAddresses
  genesisTimestamp: number
}

/**
 * The gateway's Onchain Cloud client on a simulated Onchain Cloud, found as on any devnet: from
 * its FWSS proxy, Multicall3 and endorsement set, the rest read from FWSS on chain.
 */
export function focClientOn(foc: RunningFoc, account: LocalAccount, o: Partial<FocClientOptions> = {}): Promise<FocClient> {
  return connectFocClient({ rpcUrl: foc.rpcUrl, anchors: foc.contracts, chainIds: [FOC_CHAIN_IDS.devnet], account, ...o })
}

/** The SDK's Chain for a simulated Onchain Cloud as its deployment file has it, for tests that read it with viem or synapse-core. */
export function focChainOn(foc: RunningFoc): Chain {
  const deployment = { chainId: FOC_CHAIN_IDS.devnet, contracts: foc.contracts, versions: { fwss: '1.3.1', pdpVerifier: '3.4.0' } }
  return focChain(deployment, foc.rpcUrl, foc.genesisTimestamp)
}

/**
 * The SDK's Chain for the simulated Onchain Cloud (focChainOn). For the tests that
 * call synapse-core's depositWithPermit directly, it also points the SDK's
 * built-in devnet entry at our contracts: that function looks its chain up by
 * id (getChain(client.chain.id), synapse-core 0.5.2 pay/deposit-with-permit.ts)
 * instead of using the client's, so on any devnet it would sign for and call
 * address zero. The gateway's client never relies on it (FocClient.fund).
 */
export function simulatedFocChain(rpcUrl: string, addresses: FocAddresses, genesisTimestamp: number): Chain {
  const chain = focChainOn({ rpcUrl, contracts: addresses, genesisTimestamp })
  for (const key of Object.keys(chain.contracts) as (keyof Chain['contracts'])[])
    devnet.contracts[key].address = chain.contracts[key].address
  return chain
}
