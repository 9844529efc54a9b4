/**
 * The deployer's transactions, sent as a batch: consecutive nonces, all sent
 * before any is waited for, so that one epoch covers them all (a node may
 * include a transaction only at its next epoch). Each deployment's address
 * follows from the sender and its nonce, so it is known before it is sent
 * and checked once it landed. Each carries a gas limit of its own, as a
 * deploy script may give one, instead of asking the node to run it twice
 * (eth_estimateGas, then the transaction): the simulated chain is deployed at
 * every test's start.
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
  type TransactionReceipt,
  type WalletClient,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'

export class FocTransactionError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'FocTransactionError'
  }
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

/** Enough for the largest deployment (a 24 KiB contract's creation, some 6 million gas), far below a block's 10 billion. */
export const DEPLOYER_GAS_LIMIT = 100_000_000n

export interface Deployment {
  name: string
  abi: Abi
  bytecode: Hex
  args?: readonly unknown[]
}

export interface ContractCall {
  what: string
  address: Address
  abi: Abi
  functionName: string
  args?: readonly unknown[]
}

/** The sender's next nonce, counting what it already sent. */
export async function nextNonce(wallet: WalletClient, publicClient: PublicClient): Promise<number> {
  const account = wallet.account
  if (account === undefined) throw new FocTransactionError('the wallet client has no account')
  return publicClient.getTransactionCount({ address: account.address, blockTag: 'pending' })
}

/** Where the sender's transaction of nonce `first + offset` creates its contract. */
export const addressAt = (wallet: WalletClient, first: number, offset: number): Address =>
  getContractAddress({ from: wallet.account!.address, nonce: BigInt(first + offset) })

/** Deploys each in order from nonce `first` (the sender's next one) and returns where each landed. */
export async function deployAll(
  wallet: WalletClient,
  publicClient: PublicClient,
  first: number,
  deployments: Deployment[],
): Promise<Address[]> {
  const sent: { what: string; hash: Hash; address: Address }[] = []
  for (const [index, d] of deployments.entries()) {
    const hash = await wallet.deployContract({
      abi: d.abi,
      bytecode: d.bytecode,
      args: (d.args ?? []) as unknown[],
      account: wallet.account!,
      chain: wallet.chain,
      nonce: first + index,
      gas: DEPLOYER_GAS_LIMIT,
    })
    sent.push({ what: `deploying ${d.name}`, hash, address: addressAt(wallet, first, index) })
  }
  await confirmAll(publicClient, sent)
  return sent.map((s) => s.address)
}

/** Sends each call in order from the sender's next nonce, then waits for all; their receipts in order. */
export async function callAll(wallet: WalletClient, publicClient: PublicClient, calls: ContractCall[]): Promise<TransactionReceipt[]> {
  const first = await nextNonce(wallet, publicClient)
  const sent: { what: string; hash: Hash }[] = []
  for (const [index, c] of calls.entries()) {
    const hash = await wallet.writeContract({
      address: c.address,
      abi: c.abi,
      functionName: c.functionName,
      args: (c.args ?? []) as unknown[],
      account: wallet.account!,
      chain: wallet.chain,
      nonce: first + index,
      gas: DEPLOYER_GAS_LIMIT,
    })
    sent.push({ what: c.what, hash })
  }
  return confirmAll(publicClient, sent)
}

async function confirmAll(
  publicClient: PublicClient,
  sent: { what: string; hash: Hash; address?: Address }[],
): Promise<TransactionReceipt[]> {
  const receipts: TransactionReceipt[] = []
  for (const { what, hash, address } of sent) {
    const receipt = await publicClient.waitForTransactionReceipt({ hash })
    if (receipt.status !== 'success') throw new FocTransactionError(`${what} failed (transaction ${hash})`)
    if (address !== undefined && receipt.contractAddress?.toLowerCase() !== address.toLowerCase()) {
      throw new FocTransactionError(`${what}: landed at ${receipt.contractAddress}, expected ${address}`)
    }
    receipts.push(receipt)
  }
  return receipts
}
