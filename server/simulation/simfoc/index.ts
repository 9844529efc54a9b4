import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { keccak256, parseEther, toHex, type Address, type Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { isAddressInUse } from '../../shared/free-port.ts'
import type { ServerOptions } from '../../shared/http.ts'
import type { Logger } from '../../shared/logger.ts'
import { SIMFOC_CHAIN_PROFILES, SimfocChainMismatch, type SimfocChainName, type SimfocChainProfile } from './chain-profiles.ts'
import { loadFocArtifacts } from './contracts/compile.ts'
import { deployFoc, focClients, mintUsdfc, sendFil, type FocAddresses, type FocDeployment } from './contracts/deploy.ts'
import { migrateWarmStorage } from './contracts/upgrade-warm-storage.ts'
import { startEvmNode, type EvmNode } from './evm-node.ts'
import { createViemPdpChain, registerPdpProvider } from './pdp-provider-chain.ts'
import { createPdpProvider, type PdpProvider, type PdpProviderFault } from './pdp-provider.ts'
import { checkDeployedSchedule, PROVING_SCHEDULES, type ProvingScheduleName } from './proving.ts'
import { SIMULATED_OFFERING } from './standalone-provider.ts'

export interface SimulatedFocOptions {
  /** Where the chain's journal, the contracts' addresses and each provider's pieces and database live. */
  dir: string
  seed: string
  /** The simulated clock: wall-clock unix seconds of epoch 0, and real seconds per epoch (the Lotus simulation's). */
  genesisTimestamp: number
  epochSeconds: number
  /** How many PDP providers (default 3). */
  providerCount?: number
  /**
   * How many of them the warm storage service's owner endorses, the first ones (default all but
   * one, at least one: two of three). Clients put a first copy only on an endorsed provider, as
   * on calibration and mainnet, where only some approved providers are endorsed.
   */
  endorsed?: number
  /** Port of the chain's JSON-RPC on loopback (0 or unset: any free one). */
  rpcPort?: number
  /** The proving schedule the contracts are deployed with (default calibration's 240/20/10 epochs; mainnet's 2880/60/150). */
  proving?: ProvingScheduleName
  /**
   * The network it stands as (default devnet): calibration's or mainnet's chain id and
   * published addresses (chain-profiles.ts). Set when the chain is made.
   */
  chain?: SimfocChainName
  /** A fault for some providers, by index: refuse, stall, lose (the data), stop-proving. */
  faults?: Record<number, PdpProviderFault>
  logger?: Logger
  /** Connection rules of its ports (the chain's RPC, each provider's API), as every part's. */
  http?: ServerOptions
}

export interface SimulatedPdpProvider {
  index: number
  providerId: bigint
  name: string
  url: string
  /** Whether the service's owner endorsed it (ProviderIdSet), so that it may take a first copy. */
  endorsed: boolean
  provider: PdpProvider
}

/**
 * `<dir>/contracts.json`: the addresses a devnet publishes, in the shape its
 * clients read (server/shared/foc-contracts.ts, `fwssView` the view the service
 * points at now), and beside them the service's upgrade history and the
 * network the chain stands as.
 */
export interface SimulatedFocContracts extends FocDeployment {
  chain: SimfocChainName
  chainId: number
}

/** The simulated Filecoin Onchain Cloud on loopback: an FEVM chain with our stand-in contracts, and Curio-like PDP providers. */
export interface SimulatedFoc {
  /** The chain's JSON-RPC endpoint (Lotus's eth_* at /rpc/v1). */
  rpcUrl: string
  node: EvmNode
  /** Whether this start made the chain (nothing was there to resume). */
  fresh: boolean
  /** As `<dir>/contracts.json` has them; a migrate() moves `fwssView`. */
  contracts: SimulatedFocContracts
  /** The proving schedule it runs. */
  proving: ProvingScheduleName
  genesisTimestamp: number
  providers: SimulatedPdpProvider[]
  /** The simulation's faucet: FIL for gas and USDFC to pay with, as calibration's faucets give them (fundOnSimulatedFoc). */
  faucet(address: Address, amounts: { fil?: bigint; usdfc?: bigint }): Promise<void>
  /** Upgrades the warm storage service once more, to a new GA view (migrateSimulatedFoc); returns the view's address. */
  migrate(): Promise<Address>
  close(): Promise<void>
}

const keyOf = (seed: string, name: string): Hex => keccak256(toHex(`simulated FOC ${seed}: ${name}`))

/**
 * Starts (or, from `dir`, resumes) the simulated Onchain Cloud: on a fresh
 * chain it deploys the contracts, registers each provider in the registry
 * (each pays the fee from its own key, as an operator does with Curio), and
 * has the warm storage service's owner approve them all and endorse the
 * first `endorsed`: a first copy goes only to an endorsed provider, so a
 * copy that has to be made again on its own (a provider stopped proving)
 * needs an endorsed one that does not hold it yet. Each provider listens on
 * the port it registered, so the registry's service URLs stay true across
 * restarts.
 */
export async function startSimulatedFoc(options: SimulatedFocOptions): Promise<SimulatedFoc> {
  const { dir, seed } = options
  const proving = options.proving ?? 'calibration'
  const chainName = options.chain ?? 'devnet'
  const profile: SimfocChainProfile = SIMFOC_CHAIN_PROFILES[chainName]
  mkdirSync(dir, { recursive: true })
  const contractsFile = join(dir, 'contracts.json')
  const recorded = existsSync(contractsFile) ? readContracts(contractsFile) : undefined
  if (recorded && recorded.chain !== chainName) {
    throw new SimfocChainMismatch(
      `the simulated Onchain Cloud in ${dir} stands as ${recorded.chain} (chain ${recorded.chainId}), not ${chainName}: a network is chosen when the chain is made; remove ${dir} for a new chain, or set SIMFOC_CHAIN=${recorded.chain}`,
    )
  }
  const deployerKey = keyOf(seed, 'deployer')
  const deployer = privateKeyToAccount(deployerKey).address
  const node = await startEvmNode({
    chainId: profile.chainId,
    stateFile: join(dir, 'chain.sqlite'),
    genesisTimestamp: options.genesisTimestamp,
    epochSeconds: options.epochSeconds,
    seed,
    port: options.rpcPort,
    accounts: [{ address: deployer, wei: parseEther('1000000') }],
    http: options.http,
  })
  const started: PdpProvider[] = []
  try {
    let contracts: SimulatedFocContracts
    if (node.fresh || !recorded) {
      const fixed = profile.fixed && {
        addresses: profile.fixed,
        place: (address: Address, initcode: Hex) => node.placeContract(address, deployer, initcode),
      }
      const deployment = await deployFoc(node.url, deployerKey, { schedule: PROVING_SCHEDULES[proving], fixed })
      contracts = { ...deployment, chain: chainName, chainId: profile.chainId }
      writeContracts(contractsFile, contracts)
    } else {
      contracts = recorded
      await checkDeployedSchedule(node.url, contracts, proving, dir)
    }

    const providers: SimulatedPdpProvider[] = []
    for (let index = 0; index < (options.providerCount ?? 3); index++) {
      const key = keyOf(seed, `provider ${index}`)
      const address = privateKeyToAccount(key).address
      const providerDir = join(dir, 'providers', String(index))
      mkdirSync(providerDir, { recursive: true })
      const provider = await createPdpProvider({
        dir: providerDir,
        chain: createViemPdpChain({ rpcUrl: node.url, privateKey: key, pdpVerifier: contracts.pdp }),
        recordKeepers: [contracts.fwss],
        fault: options.faults?.[index] ?? null,
        // Often enough to catch each challenge window (20 epochs) several times, at any speed.
        pollMs: Math.max(250, Math.min(1000, options.epochSeconds * 5_000)),
        log: options.logger?.child({ provider: index }),
        http: options.http,
      })
      started.push(provider)
      const portFile = join(providerDir, 'port')
      const saved = existsSync(portFile) ? Number(readFileSync(portFile, 'utf8')) : 0
      const url = await listenOnSavedPort(provider, saved, options.http?.avoidPorts)
      const moved = saved !== 0 && new URL(url).port !== String(saved)
      writeFileSync(portFile, String(new URL(url).port))
      if (node.fresh) await node.setBalance(address, parseEther('1000'))
      const name = `sim-curio-${index}`
      const providerId = await registerPdpProvider({
        rpcUrl: node.url,
        privateKey: key,
        serviceProviderRegistry: contracts.serviceProviderRegistry,
        name,
        description: 'simulated Curio PDP provider',
        offering: {
          ...SIMULATED_OFFERING,
          minProvingPeriodInEpochs: PROVING_SCHEDULES[proving].maxProvingPeriod,
          serviceURL: url,
          paymentTokenAddress: contracts.usdfc,
        },
        // A provider that had to leave its saved port says where it is now, as an operator updates its product.
        updateIfRegistered: moved,
      })
      providers.push({ index, providerId, name, url, endorsed: false, provider })
    }
    if (node.fresh) {
      const endorsed = Math.max(1, Math.min(providers.length, options.endorsed ?? providers.length - 1))
      await approveProviders(
        node.url,
        deployerKey,
        contracts,
        providers.map((p) => p.providerId),
        endorsed,
      )
    }
    const endorsedIds = await endorsedProviderIds(node.url, contracts)
    for (const p of providers) p.endorsed = endorsedIds.includes(p.providerId)

    const foc: SimulatedFoc = {
      rpcUrl: node.url,
      node,
      fresh: node.fresh,
      contracts,
      proving,
      genesisTimestamp: options.genesisTimestamp,
      providers,
      async faucet(address, { fil, usdfc }) {
        await fundOnSimulatedFoc({ dir, rpcUrl: node.url, seed, address, fil, usdfc })
      },
      async migrate() {
        const view = await migrateSimulatedFoc({ dir, rpcUrl: node.url, seed })
        foc.contracts = readContracts(contractsFile)
        return view
      },
      async close() {
        for (const p of providers) await p.provider.close()
        await node.close()
      },
    }
    return foc
  } catch (error) {
    for (const p of started) await p.close().catch(() => undefined)
    await node.close()
    throw error
  }
}

/** contracts.json as written; one written before SIMFOC_CHAIN stood as the devnet. */
function readContracts(file: string): SimulatedFocContracts {
  const c = JSON.parse(readFileSync(file, 'utf8')) as Partial<SimulatedFocContracts> & FocAddresses
  const chain = c.chain ?? 'devnet'
  return { formerFwssViews: [], fwssImplementation: c.fwss, ...c, chain, chainId: c.chainId ?? SIMFOC_CHAIN_PROFILES[chain].chainId }
}

function writeContracts(file: string, contracts: SimulatedFocContracts): void {
  // through a rename, so that a gateway reading it while a migration runs never sees half of it
  const temporary = `${file}.${process.pid}.tmp`
  writeFileSync(temporary, JSON.stringify(contracts, null, 2))
  renameSync(temporary, file)
}

/** A running simulated Onchain Cloud, as another process finds it: its directory (DATA_DIR/simfoc), RPC URL and seed (SIMNET_SEED). */
export interface SimulatedFocAt {
  /** Where it keeps contracts.json: `<DATA_DIR>/simfoc`. */
  dir: string
  /** Its JSON-RPC endpoint (SIMFOC_RPC_URL). */
  rpcUrl: string
  /** The seed it was made with (SIMNET_SEED): its deployer, the service's owner and USDFC's minter, signs. */
  seed: string
}

/** The simulated Onchain Cloud asked for is not there, or not the one the seed made: the message says which and what to do. */
export class SimulatedFocUnavailable extends Error {
  override name = 'SimulatedFocUnavailable'
}

/** Its contracts, once its chain answers at `rpcUrl` and the seed's deployer owns them. */
async function reach(at: SimulatedFocAt): Promise<{ contracts: SimulatedFocContracts; deployerKey: Hex }> {
  const file = join(at.dir, 'contracts.json')
  if (!existsSync(file)) {
    throw new SimulatedFocUnavailable(`no simulated Onchain Cloud in ${at.dir} (no contracts.json): start the stack first (npm start)`)
  }
  const contracts = readContracts(file)
  const deployerKey = keyOf(at.seed, 'deployer')
  const { publicClient } = await focClients(at.rpcUrl, deployerKey).catch(() => {
    throw new SimulatedFocUnavailable(`the simulated Onchain Cloud does not answer at ${at.rpcUrl}: is the stack running (npm start)?`)
  })
  const artifacts = await loadFocArtifacts()
  const minter = await publicClient
    .readContract({ address: contracts.usdfc, abi: artifacts.SimUsdfc.abi, functionName: 'minter' })
    .catch(() => undefined)
  if (minter === undefined) {
    throw new SimulatedFocUnavailable(
      `the chain at ${at.rpcUrl} is not the simulated Onchain Cloud of ${at.dir}: its USDFC is not at ${contracts.usdfc}`,
    )
  }
  if ((minter as Address).toLowerCase() !== privateKeyToAccount(deployerKey).address.toLowerCase()) {
    throw new SimulatedFocUnavailable(`the simulated Onchain Cloud at ${at.rpcUrl} was made from another seed than this SIMNET_SEED`)
  }
  return { contracts, deployerKey }
}

/**
 * The simulated Onchain Cloud's faucet: FIL sent to `address` and USDFC minted to it, each a
 * transaction of the simulation's deployer (USDFC's minter), as calibration's faucets send them.
 * Throws SimulatedFocUnavailable when there is no such running simulated Onchain Cloud.
 */
export async function fundOnSimulatedFoc(o: SimulatedFocAt & { address: Address; fil?: bigint; usdfc?: bigint }): Promise<void> {
  const { contracts, deployerKey } = await reach(o)
  if (o.fil) await sendFil(o.rpcUrl, deployerKey, o.address, o.fil)
  if (o.usdfc) await mintUsdfc(o.rpcUrl, deployerKey, contracts.usdfc, o.address, o.usdfc)
}

/**
 * Migrates the running simulated Onchain Cloud's warm storage service once more, as its owner
 * did on calibration for 1.3.0 and 1.3.1: a new implementation and a new GA state view deployed,
 * the upgrade announced, and at the next epoch upgradeToAndCall(implementation, migrate(view)),
 * so FWSS's viewContractAddress() names a view at a new address (the former one keeps answering).
 * `<dir>/contracts.json` then names the new view. Takes an epoch of the chain's clock or two;
 * meant for one caller at a time (the deployer's nonces). Returns the new view's address.
 */
export async function migrateSimulatedFoc(at: SimulatedFocAt): Promise<Address> {
  const { contracts, deployerKey } = await reach(at)
  const release = await migrateWarmStorage(at.rpcUrl, deployerKey, contracts.fwss)
  writeContracts(join(at.dir, 'contracts.json'), {
    ...contracts,
    fwssView: release.view,
    fwssImplementation: release.implementation,
    formerFwssViews: [...contracts.formerFwssViews, contracts.fwssView],
  })
  return release.view
}

/**
 * A provider listens on the port it registered, so that the registry's
 * service URL stays true across restarts, unless that port is now one the
 * stack is configured on or another process holds it: then on a free one,
 * and the registry is told.
 */
export async function listenOnSavedPort(provider: PdpProvider, saved: number, avoid: ReadonlySet<number> | undefined): Promise<string> {
  if (saved === 0 || avoid?.has(saved)) return provider.listen(0)
  try {
    return await provider.listen(saved)
  } catch (err) {
    if (!isAddressInUse(err)) throw err
    return provider.listen(0)
  }
}

/** The providers the service's owner endorsed, as the chain has them (ProviderIdSet getProviderIds). */
async function endorsedProviderIds(rpcUrl: string, contracts: FocAddresses): Promise<bigint[]> {
  const { publicClient } = await focClients(rpcUrl, keyOf('', 'reader'))
  const artifacts = await loadFocArtifacts()
  const ids = await publicClient.readContract({
    address: contracts.endorsements,
    abi: artifacts.ProviderIdSet.abi,
    functionName: 'getProviderIds',
  })
  return [...(ids as readonly bigint[])]
}

/**
 * The simulated Onchain Cloud's owner (its deployer, from `seed`) approves a
 * provider that registered on its own (`npm run simfoc -- provider`), and
 * endorses it when asked, as a devnet's operator does.
 */
export async function approveOnSimulatedFoc(o: {
  rpcUrl: string
  seed: string
  contracts: FocAddresses
  providerId: bigint
  endorse: boolean
}) {
  await approveProviders(o.rpcUrl, keyOf(o.seed, 'deployer'), o.contracts, [o.providerId], o.endorse ? 1 : 0)
}

/** The service owner's approval (FWSS addApprovedProvider) of each provider, and endorsement (ProviderIdSet addProviderId) of the first `endorsed`. */
async function approveProviders(
  rpcUrl: string,
  ownerKey: Hex,
  contracts: FocAddresses,
  providerIds: bigint[],
  endorsed: number,
): Promise<void> {
  const { wallet, publicClient } = await focClients(rpcUrl, ownerKey)
  const artifacts = await loadFocArtifacts()
  const send = async (address: Address, abi: (typeof artifacts)[string]['abi'], functionName: string, args: unknown[]) => {
    const hash = await wallet.writeContract({ address, abi, functionName, args, account: wallet.account!, chain: wallet.chain } as never)
    const receipt = await publicClient.waitForTransactionReceipt({ hash })
    if (receipt.status !== 'success') throw new Error(`${functionName}(${args.join(', ')}) failed on the simulated chain`)
  }
  for (const [index, id] of providerIds.entries()) {
    await send(contracts.fwss, artifacts.FilecoinWarmStorageService.abi, 'addApprovedProvider', [id])
    if (index < endorsed) await send(contracts.endorsements, artifacts.ProviderIdSet.abi, 'addProviderId', [id])
  }
}
