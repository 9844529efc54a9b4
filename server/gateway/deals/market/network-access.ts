import { chainDirectory, createProviderClient, type ProviderClient } from '../../../network/boost/client.ts'
import { createLotusNetwork, type LotusOptions } from '../../../network/lotus/index.ts'
import type { NetworkPort } from '../../../network/types.ts'
import type { Signer } from '../../../network/wallet/keys.ts'
import type { AddressNetwork } from '../../../shared/address.ts'
import type { NetworkClock } from '../../../shared/epochs.ts'
import { boostProviderPort } from './boost-provider-port.ts'
import type { StorageProviderPort } from './provider-port.ts'

/** The gateway's way to a network: its chain, its providers, and the port the deal engine uses. */
export interface NetworkAccess {
  chain: NetworkPort
  client: ProviderClient
  port: StorageProviderPort
  close(): Promise<void>
}

/**
 * The one way the gateway reaches a network, simulated or real: the chain
 * through Lotus JSON-RPC at `rpcUrl`, providers found in their miner info and
 * spoken to over libp2p (Boost's and Curio's protocols) and HTTP, proposals
 * and status requests signed with `signer`. `npm start`, the deal tests and
 * the bench all go through here.
 */
export async function connectToNetwork(o: {
  rpcUrl: string
  token?: string
  clock: NetworkClock
  signer: Signer
  network: AddressNetwork
  timeoutMs?: number
  /** How a call a busy node refused is sent again (default: twice, from 0.5 s). */
  busyRetry?: LotusOptions['busyRetry']
  fetch?: typeof fetch
}): Promise<NetworkAccess> {
  const chain = createLotusNetwork({
    url: o.rpcUrl,
    token: o.token,
    clock: o.clock,
    timeoutMs: o.timeoutMs ?? 10_000,
    busyRetry: o.busyRetry,
    fetch: o.fetch,
  })
  const client = await createProviderClient({ directory: chainDirectory(chain), signer: o.signer, network: o.network })
  return {
    chain,
    client,
    port: boostProviderPort({ chain, client, fetch: o.fetch }),
    close: () => client.close(),
  }
}
