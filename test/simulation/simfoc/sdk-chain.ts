import { devnet, type Chain } from '@filoz/synapse-core/chains'
import { focChain } from '../../../server/network/foc/chain.ts'
import type { FocAddresses } from '../../../server/simulation/simfoc/contracts/deploy.ts'

/**
 * The SDK's Chain for the simulated Onchain Cloud, as the gateway's client
 * builds it for any devnet (server/network/foc/chain.ts). For the tests that
 * call synapse-core's depositWithPermit directly, it also points the SDK's
 * built-in devnet entry at our contracts: that function looks its chain up by
 * id (getChain(client.chain.id), synapse-core 0.5.2 pay/deposit-with-permit.ts)
 * instead of using the client's, so on any devnet it would sign for and call
 * address zero. The gateway's client never relies on it (FocClient.fund).
 */
export function simulatedFocChain(rpcUrl: string, addresses: FocAddresses, genesisTimestamp: number): Chain {
  const chain = focChain('devnet', rpcUrl, { contracts: addresses, genesisTimestamp })
  for (const key of Object.keys(chain.contracts) as (keyof Chain['contracts'])[])
    devnet.contracts[key].address = chain.contracts[key].address
  return chain
}
