import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { keccak256, parseEther, toHex, type Address, type Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { isAddressInUse } from '../../shared/free-port.ts'
import type { ServerOptions } from '../../shared/http.ts'
import type { Logger } from '../../shared/logger.ts'
import { loadFocArtifacts } from './contracts/compile.ts'
import { deployFoc, focClients, mintUsdfc, type FocAddresses } from './contracts/deploy.ts'
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

/** The simulated Filecoin Onchain Cloud on loopback: an FEVM chain with our stand-in contracts, and Curio-like PDP providers. */
export interface SimulatedFoc {
  /** The chain's JSON-RPC endpoint (Lotus's eth_* at /rpc/v1). */
  rpcUrl: string
  node: EvmNode
  /** Whether this start made the chain (nothing was there to resume). */
  fresh: boolean
  contracts: FocAddresses
  /** The proving schedule it runs. */
  proving: ProvingScheduleName
  genesisTimestamp: number
  providers: SimulatedPdpProvider[]
  /** The simulation's faucet: FIL for gas and USDFC to pay with, as calibration's faucets give them. */
  faucet(address: Address, amounts: { fil?: bigint; usdfc?: bigint }): Promise<void>
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
  mkdirSync(dir, { recursive: true })
  const deployerKey = keyOf(seed, 'deployer')
  const deployer = privateKeyToAccount(deployerKey).address
  const node = await startEvmNode({
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
    const contractsFile = join(dir, 'contracts.json')
    let contracts: FocAddresses
    if (node.fresh || !existsSync(contractsFile)) {
      contracts = await deployFoc(node.url, deployerKey, PROVING_SCHEDULES[proving])
      writeFileSync(contractsFile, JSON.stringify(contracts, null, 2))
    } else {
      contracts = JSON.parse(readFileSync(contractsFile, 'utf8')) as FocAddresses
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

    return {
      rpcUrl: node.url,
      node,
      fresh: node.fresh,
      contracts,
      proving,
      genesisTimestamp: options.genesisTimestamp,
      providers,
      async faucet(address, { fil, usdfc }) {
        if (fil) await node.setBalance(address, (await node.chain.balance(address)) + fil)
        if (usdfc) await mintUsdfc(node.url, deployerKey, contracts.usdfc, address, usdfc)
      },
      async close() {
        for (const p of providers) await p.provider.close()
        await node.close()
      },
    }
  } catch (error) {
    for (const p of started) await p.close().catch(() => undefined)
    await node.close()
    throw error
  }
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
