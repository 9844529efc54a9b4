/**
 * Deploys the simulated Onchain Cloud's contracts to an EVM JSON-RPC node. A
 * client learns where they are as from a real FOC devnet (server/network/foc/chain.ts).
 */
import {
  createPublicClient,
  createWalletClient,
  defineChain,
  getContractAddress,
  http,
  type Abi,
  type Address,
  type Hash,
  type Hex,
  type PublicClient,
  type WalletClient,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { loadFocArtifacts, type FocArtifacts } from './compile.ts'
import { deployWarmStorage, type WarmStorageOptions } from './deploy-warm-storage.ts'
import type { FocContracts } from '../../../shared/foc-contracts.ts'

/** Where the deployment put each contract: what a devnet publishes, in the shape its clients read (a record of addresses, no code). */
export type FocAddresses = FocContracts

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

/**
 * Deploys every contract from `deployerKey`, which must hold FIL for gas. The
 * deployer owns what has an owner (the endorsements list, the registry) and is
 * USDFC's minter (the faucet). The addresses follow from the deployer and its
 * nonce, so a fresh deployer on a fresh chain always gets the same ones.
 * `schedule` is the proving schedule (calibration's by default).
 */
export async function deployFoc(rpcUrl: string, deployerKey: Hex, schedule: WarmStorageOptions = {}): Promise<FocAddresses> {
  const { wallet, publicClient } = await focClients(rpcUrl, deployerKey)
  const artifacts = await loadFocArtifacts()
  const paySide = await deployPaySide(wallet, publicClient, artifacts)
  const warm = await deployWarmStorage(
    wallet,
    publicClient,
    artifacts,
    {
      usdfc: paySide.usdfc,
      filecoinPay: paySide.filecoinPay,
      serviceProviderRegistry: paySide.serviceProviderRegistry,
      sessionKeyRegistry: paySide.sessionKeyRegistry,
      endorsements: paySide.endorsements,
    },
    schedule,
  )
  return { ...paySide, ...warm }
}

/** A wallet client for `key` and a public client, on the node's own chain id, polling briskly. */
export async function focClients(rpcUrl: string, key: Hex): Promise<{ wallet: WalletClient; publicClient: PublicClient }> {
  const probe = createPublicClient({ transport: http(rpcUrl) })
  const chain = defineChain({
    id: await probe.getChainId(),
    name: 'Simulated Filecoin Onchain Cloud',
    nativeCurrency: { name: 'Filecoin', symbol: 'FIL', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  })
  const transport = http(rpcUrl)
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 100 })
  const wallet = createWalletClient({ account: privateKeyToAccount(key), chain, transport, pollingInterval: 100 })
  return { wallet, publicClient }
}

/**
 * Sends every pay-side deployment at once, with consecutive nonces, then
 * waits for all of them: the node may include transactions only at the next
 * epoch, and one epoch then covers them all.
 */
export async function deployPaySide(wallet: WalletClient, publicClient: PublicClient, artifacts: FocArtifacts): Promise<PaySide> {
  const account = wallet.account
  if (account === undefined) throw new FocDeployError('the wallet client has no account')
  const nonce = await publicClient.getTransactionCount({ address: account.address, blockTag: 'pending' })
  const sent: { key: keyof PaySide; name: string; hash: Hash; address: Address }[] = []
  for (const [index, [key, name]] of PAY_SIDE.entries()) {
    const artifact = artifacts[name]
    if (artifact === undefined) throw new FocDeployError(`no compiled contract named ${name}`)
    const hash = await wallet.deployContract({
      abi: artifact.abi as Abi,
      bytecode: artifact.bytecode,
      account,
      chain: wallet.chain,
      nonce: nonce + index,
    })
    sent.push({ key, name, hash, address: getContractAddress({ from: account.address, nonce: BigInt(nonce + index) }) })
  }
  const addresses = {} as PaySide
  for (const { key, name, hash, address } of sent) {
    const receipt = await publicClient.waitForTransactionReceipt({ hash })
    if (receipt.status !== 'success') throw new FocDeployError(`deploying ${name} failed (transaction ${hash})`)
    if (receipt.contractAddress?.toLowerCase() !== address.toLowerCase()) {
      throw new FocDeployError(`${name} landed at ${receipt.contractAddress}, expected ${address}`)
    }
    addresses[key] = address
  }
  return addresses
}

/** The faucet: mints simulated USDFC to `to`, signed by the deployer (the token's minter). */
export async function mintUsdfc(rpcUrl: string, deployerKey: Hex, usdfc: Address, to: Address, amount: bigint): Promise<Hash> {
  const { wallet, publicClient } = await focClients(rpcUrl, deployerKey)
  const artifacts = await loadFocArtifacts()
  const hash = await wallet.writeContract({
    address: usdfc,
    abi: artifacts.SimUsdfc.abi,
    functionName: 'mint',
    args: [to, amount],
    account: wallet.account!,
    chain: wallet.chain,
  })
  const receipt = await publicClient.waitForTransactionReceipt({ hash })
  if (receipt.status !== 'success') throw new FocDeployError(`minting USDFC failed (transaction ${hash})`)
  return hash
}
