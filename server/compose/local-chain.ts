import { createHash } from 'node:crypto'
import { formatAddress } from '../shared/address.ts'
import type { Config, ServiceConfig } from '../shared/config.ts'
import type { NetworkClock } from '../shared/epochs.ts'
import { openKeystore } from '../network/index.ts'
import { createLotusNetwork, type LotusOptions } from '../network/lotus/index.ts'
import type { NetworkPort } from '../network/types.ts'
import { createSimnet, openSimChainStore, type Simnet, type SimnetOptions } from '../simulation/index.ts'

/**
 * The simulated chain the deal service's settings describe (SIMNET_SEED,
 * SIMNET_SPEED, SIMNET_GENESIS, SIMNET_NV29_EPOCH) in this process; in memory
 * unless `options.stateFile` keeps it.
 */
export function simnetFor(s: ServiceConfig, options: Pick<SimnetOptions, 'stateFile' | 'clock' | 'now'> = {}): Simnet {
  return createSimnet({ seed: s.simnetSeed, speed: s.simnetSpeed, genesis: s.simnetGenesis, nv29Epoch: s.simnetNv29Epoch, ...options })
}

/** The embedded simulated chain, in `<DATA_DIR>/simnet/chain.sqlite`, shared by every process that opens it. */
export function openSimnet(config: Config): Simnet {
  return simnetFor(config.service, { stateFile: config.files.simnetChain })
}

/**
 * A deal service replica's view of the simulated network another one runs:
 * the providers and their terms follow from the seed alone, the chain's clock
 * from its saved state; deals are read over the RPC, never kept here.
 */
export function openSimnetDirectory(config: Config): Simnet {
  return simnetFor(config.service, { clock: savedSimnetClock(config) })
}

/**
 * The simulated network as the deal service beside it sees it: the chain
 * through the Lotus JSON-RPC adapter at `rpcUrl` (the code path of a real
 * network), and the provider directory (who the providers are and their full
 * terms: capacity, busy days, accepted clients and deal types, which no ask
 * carries) from the simulation, as a real deployment gets it from its
 * operator's policy or a provider directory service.
 */
export function simnetOverRpc(simnet: Simnet, rpcUrl: string, o: Pick<LotusOptions, 'timeoutMs' | 'busyRetry'> = {}): NetworkPort {
  const chain = createLotusNetwork({ url: rpcUrl, clock: simnet.clock, timeoutMs: o.timeoutMs ?? 10_000, busyRetry: o.busyRetry })
  return {
    ...chain,
    kind: 'simnet',
    listProviders: () => simnet.listProviders(),
    providerTerms: (providerId) => simnet.providerTerms(providerId),
  }
}

/** The simulated chain's clock as saved there, so that the app surface's dates follow the same (sped-up) head. */
export function savedSimnetClock(config: Config): NetworkClock | undefined {
  if (config.service.lotusUrl) return undefined
  const store = openSimChainStore(config.files.simnetChain)
  try {
    return store.clock(config.service.simnetGenesis, config.service.simnetSpeed, Date.now())
  } finally {
    store.close()
  }
}

/**
 * The wallet key that signs the gateway's deals (WALLET, else the default key
 * of `<DATA_DIR>/wallet`). On the simulated network and on a devnet (whose
 * keys are throwaway) one is made at the first start; on a real one the
 * operator brings it (`npm run wallet`).
 */
export function walletSigner(config: Config) {
  const keystore = openKeystore(config.wallet.dir, config.chain.addressNetwork)
  if (keystore.list().length === 0) {
    if (!config.chain.makesWalletKey) return undefined
    keystore.create()
  }
  return keystore.signer(config.wallet.key)
}

/** The same wallet key as an FEVM account, for the Onchain Cloud; undefined while there is no key. */
export function walletEvmAccount(config: Config) {
  const keystore = openKeystore(config.wallet.dir, config.chain.addressNetwork)
  return keystore.list().length === 0 ? undefined : keystore.evmAccount(config.wallet.key)
}

/** The simulated network's demo client (the same under a seed): the default tenant's, with deals seeded over the past year. */
export function demoClientAddress(seed: string): string {
  return formatAddress('mainnet', 1, createHash('sha256').update(`client:${seed}`).digest().subarray(0, 20))
}
