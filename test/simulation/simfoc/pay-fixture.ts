/**
 * A simulated Onchain Cloud for the pay-side tests: the lead's EVM node with
 * its epoch set by hand (no wall clock), our contracts deployed by deployFoc,
 * and viem clients on the SDK's Chain for named, funded accounts.
 */
import type { Chain } from '@filoz/synapse-core/chains'
import {
  createPublicClient,
  createWalletClient,
  http,
  keccak256,
  parseEther,
  toHex,
  type Abi,
  type Account,
  type Address,
  type Hash,
  type Hex,
  type PublicClient,
  type Transport,
  type WalletClient,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { loadFocArtifacts, type FocArtifacts } from '../../../server/simulation/simfoc/contracts/compile.ts'
import { deployFoc, mintUsdfc, type FocAddresses } from '../../../server/simulation/simfoc/contracts/deploy.ts'
import { simulatedFocChain } from './sdk-chain.ts'
import { startEvmNode, type EvmNode } from '../../../server/simulation/simfoc/evm-node.ts'

/**
 * Epoch 0, a whole day 30 days back. The SDK signs permits and session keys
 * with deadlines of wall time + 1 hour (Date.now()), which the contracts
 * compare with block.timestamp = GENESIS + epoch × 30; the tests' epochs (up
 * to a few thousand, a day or two of chain time) stay well before that.
 */
export const GENESIS = Math.floor(Date.now() / 86_400_000) * 86_400 - 30 * 86_400

/** A private key derived from a name, so every run uses the same accounts. */
export const keyOf = (name: string): Hex => keccak256(toHex(`simfoc pay test: ${name}`))

export type SdkClient = WalletClient<Transport, Chain, Account>

export interface PayChain {
  node: EvmNode
  addresses: FocAddresses
  chain: Chain
  artifacts: FocArtifacts
  publicClient: PublicClient<Transport, Chain>
  deployerKey: Hex
  epoch(): number
  setEpoch(epoch: number): void
  /** A wallet client for a named account, funded with 100 FIL for gas. */
  wallet(name: string): Promise<SdkClient>
  /** Mints simulated USDFC to `to` (the deployer is the faucet). */
  mint(to: Address, amount: bigint): Promise<void>
  /** Sends a contract call and waits for it; throws what the node answered on a revert. */
  send(client: SdkClient, address: Address, abi: Abi, functionName: string, args: unknown[], value?: bigint): Promise<Hash>
  close(): Promise<void>
}

export async function startPayChain(): Promise<PayChain> {
  let epoch = 0
  const deployerKey = keyOf('deployer')
  const node = await startEvmNode({
    headEpoch: () => epoch,
    genesisTimestamp: GENESIS,
    accounts: [{ address: privateKeyToAccount(deployerKey).address, wei: parseEther('1000') }],
  })
  const addresses = await deployFoc(node.url, deployerKey, {
    // the service's upgrade waits for the epoch after its announcement: this chain's clock is ours to move
    untilEpoch: async (next) => {
      epoch = Math.max(epoch, Number(next))
    },
  })
  const chain = simulatedFocChain(node.url, addresses, GENESIS)
  const artifacts = await loadFocArtifacts()
  const publicClient = createPublicClient({ chain, transport: http(node.url), pollingInterval: 50 })
  const funded = new Set<Address>()
  return {
    node,
    addresses,
    chain,
    artifacts,
    publicClient,
    deployerKey,
    epoch: () => epoch,
    setEpoch: (next) => {
      if (next < epoch) throw new Error(`the chain does not go back from ${epoch} to ${next}`)
      epoch = next
    },
    async wallet(name) {
      const account = privateKeyToAccount(keyOf(name))
      if (!funded.has(account.address)) {
        await node.setBalance(account.address, parseEther('100'))
        funded.add(account.address)
      }
      return createWalletClient({ account, chain, transport: http(node.url), pollingInterval: 50 })
    },
    async mint(to, amount) {
      await mintUsdfc(node.url, deployerKey, addresses.usdfc, to, amount)
    },
    async send(client, address, abi, functionName, args, value) {
      const { request } = await publicClient.simulateContract({ account: client.account, address, abi, functionName, args, value })
      const hash = await client.writeContract(request as Parameters<SdkClient['writeContract']>[0])
      const receipt = await publicClient.waitForTransactionReceipt({ hash })
      if (receipt.status !== 'success') throw new Error(`${functionName} failed in ${hash}`)
      return hash
    },
    close: () => node.close(),
  }
}
