import type { Config } from '../shared/config.ts'
import type { NetworkClock } from '../shared/epochs.ts'
import { openKeystore } from '../network/index.ts'
import { createSimnet, openSimChainStore, type Simnet } from '../simulation/index.ts'

/** The embedded simulated chain, in `<DATA_DIR>/simnet/chain.sqlite`, shared by every process that opens it. */
export function openSimnet(config: Config): Simnet {
  const s = config.service
  return createSimnet({
    seed: s.simnetSeed,
    speed: s.simnetSpeed,
    genesis: s.simnetGenesis,
    nv29Epoch: s.simnetNv29Epoch,
    stateFile: config.files.simnetChain,
  })
}

/**
 * A deal service replica's view of the simulated network another one runs:
 * the providers and their terms follow from the seed alone, the chain's clock
 * from its saved state; deals are read over the RPC, never kept here.
 */
export function openSimnetDirectory(config: Config): Simnet {
  const s = config.service
  return createSimnet({
    seed: s.simnetSeed,
    speed: s.simnetSpeed,
    genesis: s.simnetGenesis,
    nv29Epoch: s.simnetNv29Epoch,
    clock: savedSimnetClock(config),
  })
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
  const keystore = openKeystore(config.files.wallet, config.chain.addressNetwork)
  if (keystore.list().length === 0) {
    if (!config.chain.makesWalletKey) return undefined
    keystore.create()
  }
  return keystore.signer(config.gateway.wallet)
}

/** The same wallet key as an FEVM account, for the Onchain Cloud; undefined while there is no key. */
export function walletEvmAccount(config: Config) {
  const keystore = openKeystore(config.files.wallet, config.chain.addressNetwork)
  return keystore.list().length === 0 ? undefined : keystore.evmAccount(config.gateway.wallet)
}
