/**
 * Deploys the simulated Onchain Cloud's contracts to an EVM JSON-RPC node. A
 * client learns where they are as from a real FOC devnet (server/network/foc/chain.ts).
 */
import { encodeDeployData, type Address, type Hash, type Hex, type PublicClient, type WalletClient } from 'viem'
import type { FixedAddresses } from '../chain-profiles.ts'
import { loadFocArtifacts, type FocArtifacts } from './compile.ts'
import { deployWarmStorage, type PlaceContract, type WarmStorageOptions } from './deploy-warm-storage.ts'
import { callAll, deployAll, focClients, FocTransactionError, nextNonce } from './send.ts'
import type { UntilEpoch } from './upgrade-warm-storage.ts'
import type { FocContracts } from '../../../shared/foc-contracts.ts'

export { focClients } from './send.ts'

/** Where the deployment put each contract: what a devnet publishes, in the shape its clients read (a record of addresses, no code). */
export type FocAddresses = FocContracts

/** What deployFoc made: the addresses clients are given, and the service's upgrade history. */
export interface FocDeployment extends FocAddresses {
  /** The implementation the service's proxy (`fwss`) runs now. */
  fwssImplementation: Address
  /** The views the service pointed at before `fwssView`, oldest first. */
  formerFwssViews: Address[]
}

export class FocDeployError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'FocDeployError'
  }
}

/** The pay-side contracts, in deployment order, by their artifact names. */
const PAY_SIDE = [
  ['multicall3', 'Multicall3'],
  ['usdfc', 'SimUsdfc'],
  ['filecoinPay', 'FilecoinPay'],
  ['serviceProviderRegistry', 'ServiceProviderRegistry'],
  ['sessionKeyRegistry', 'SessionKeyRegistry'],
  ['endorsements', 'ProviderIdSet'],
] as const

type PaySide = Record<(typeof PAY_SIDE)[number][0], Address>

export interface FocDeployOptions {
  /** The proving schedule (calibration's by default). */
  schedule?: WarmStorageOptions
  /**
   * Stand as calibration or mainnet do: these contracts at their published addresses
   * (chain-profiles.ts), each created there by `place`, the chain's pre-history step
   * (EvmNode.placeContract), as if the deployer had deployed it there.
   */
  fixed?: { addresses: FixedAddresses; place: PlaceContract }
  /**
   * Resolves once the chain's head has reached an epoch: the service's upgrade is announced for
   * the next epoch and made then. By default the node is asked until its clock gets there; a
   * chain whose epochs a test moves by hand moves them.
   */
  untilEpoch?: UntilEpoch
}

/**
 * Deploys every contract from `deployerKey`, which must hold FIL for gas. The
 * deployer owns what has an owner (the endorsements list, the registry, the
 * warm storage service) and is USDFC's minter (the faucet). The addresses follow
 * from the deployer and its nonce, so a fresh deployer on a fresh chain always
 * gets the same ones; those `fixed` names are where that network has them.
 */
export async function deployFoc(rpcUrl: string, deployerKey: Hex, options: FocDeployOptions = {}): Promise<FocDeployment> {
  const { wallet, publicClient } = await focClients(rpcUrl, deployerKey)
  const artifacts = await loadFocArtifacts()
  const paySide = await deployPaySide(wallet, publicClient, artifacts, options.fixed)
  const warm = await deployWarmStorage(wallet, publicClient, artifacts, paySide, {
    ...options.schedule,
    fixed: options.fixed,
    untilEpoch: options.untilEpoch,
  })
  return { ...paySide, ...warm }
}

/**
 * Sends every pay-side deployment at once, with consecutive nonces, then
 * waits for all of them: the node may include transactions only at the next
 * epoch, and one epoch then covers them all. Multicall3 and the endorsement
 * set are created at their published addresses instead when `fixed` names them.
 */
export async function deployPaySide(
  wallet: WalletClient,
  publicClient: PublicClient,
  artifacts: FocArtifacts,
  fixed?: { addresses: FixedAddresses; place: PlaceContract },
): Promise<PaySide> {
  const placed: Partial<Record<keyof PaySide, Address>> = fixed
    ? { multicall3: fixed.addresses.multicall3, endorsements: fixed.addresses.endorsements }
    : {}
  const addresses = {} as PaySide
  const deployed: (typeof PAY_SIDE)[number][] = []
  for (const entry of PAY_SIDE) {
    const [key, name] = entry
    const artifact = artifacts[name]
    if (artifact === undefined) throw new FocDeployError(`no compiled contract named ${name}`)
    const at = placed[key]
    if (at === undefined) deployed.push(entry)
    else {
      await fixed!.place(at, encodeDeployData({ abi: artifact.abi, bytecode: artifact.bytecode }))
      addresses[key] = at
    }
  }
  const first = await nextNonce(wallet, publicClient)
  const landed = await deployAll(
    wallet,
    publicClient,
    first,
    deployed.map(([, name]) => ({ name, ...artifacts[name] })),
  )
  for (const [index, [key]] of deployed.entries()) addresses[key] = landed[index]
  return addresses
}

/** The faucet's USDFC: minted to `to` by the deployer (the token's minter). */
export async function mintUsdfc(rpcUrl: string, deployerKey: Hex, usdfc: Address, to: Address, amount: bigint): Promise<Hash> {
  const { wallet, publicClient } = await focClients(rpcUrl, deployerKey)
  const artifacts = await loadFocArtifacts()
  const [receipt] = await callAll(wallet, publicClient, [
    { what: 'minting USDFC', address: usdfc, abi: artifacts.SimUsdfc.abi, functionName: 'mint', args: [to, amount] },
  ]).catch((error: unknown) => {
    throw error instanceof FocTransactionError ? new FocDeployError(error.message) : error
  })
  return receipt.transactionHash
}

/** The faucet's FIL: sent to `to` by the deployer, a plain transfer. */
export async function sendFil(rpcUrl: string, deployerKey: Hex, to: Address, wei: bigint): Promise<Hash> {
  const { wallet, publicClient } = await focClients(rpcUrl, deployerKey)
  const hash = await wallet.sendTransaction({ to, value: wei, account: wallet.account!, chain: wallet.chain })
  const receipt = await publicClient.waitForTransactionReceipt({ hash })
  if (receipt.status !== 'success') throw new FocDeployError(`sending FIL failed (transaction ${hash})`)
  return hash
}
