/**
 * The simulated Onchain Cloud for the proof and warm-storage tests: the lead's
 * EVM node with its epoch moved by hand (no wall clock), every contract
 * deployed by deployFoc (pay side, then deployWarmStorage), viem clients on the
 * SDK's Chain, and a prover that answers PDPVerifier's challenges from
 * commp-tree.ts.
 */
import type { Chain } from '@filoz/synapse-core/chains'
import * as Abis from '@filoz/synapse-core/abis'
import {
  BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  createWalletClient,
  encodePacked,
  http,
  keccak256,
  parseEther,
  toHex,
  type Abi,
  type AbiEvent,
  type AbiFunction,
  type Account,
  type Address,
  type Hex,
  type PublicClient,
  type TransactionReceipt,
  type Transport,
  type WalletClient,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { formatAbiItem, formatAbiParams } from 'viem/utils'
import { loadFocArtifacts, type FocArtifacts } from '../../../server/simulation/simfoc/contracts/compile.ts'
import { deployFoc, mintUsdfc, type FocAddresses } from '../../../server/simulation/simfoc/contracts/deploy.ts'
import { simulatedFocChain } from './sdk-chain.ts'
import { startEvmNode, type EvmNode } from '../../../server/simulation/simfoc/evm-node.ts'
import type { PieceTree } from './commp-tree.ts'

/**
 * Epoch 0, a month before the machine's date: the SDK signs USDFC permits with wall-clock
 * deadlines (Date.now() + 1 hour) that the token compares with block.timestamp, and the tests
 * fund their clients within the chain's first day. Nothing else depends on the date.
 */
export const GENESIS = Math.floor(Date.now() / 1000) - 30 * 86_400

/** PDPVerifier's ABI with the warm storage service's errors, so reverts coming up through the listener decode. */
export const pdpWithListenerErrors = [...Abis.pdp, ...Abis.generated.errorsAbi] as const

/** A private key derived from a name, so every run uses the same accounts. */
export const keyOf = (name: string): Hex => keccak256(toHex(`simfoc pdp test: ${name}`))

export type SdkClient = WalletClient<Transport, Chain, Account>

export interface Foc {
  node: EvmNode
  addresses: FocAddresses
  chain: Chain
  artifacts: FocArtifacts
  publicClient: PublicClient<Transport, Chain>
  deployer: SdkClient
  epoch(): number
  setEpoch(epoch: number): void
  wallet(name: string): Promise<SdkClient>
  mint(to: Address, amount: bigint): Promise<void>
  /** Simulates then sends a call and waits for it; a revert throws viem's error from the simulation. */
  send(
    client: SdkClient,
    address: Address,
    abi: Abi | readonly unknown[],
    functionName: string,
    args: unknown[],
    value?: bigint,
  ): Promise<TransactionReceipt>
  close(): Promise<void>
}

export async function startFoc(): Promise<Foc> {
  let epoch = 0
  const deployerKey = keyOf('deployer')
  const node = await startEvmNode({
    headEpoch: () => epoch,
    genesisTimestamp: GENESIS,
    seed: 'pdp tests',
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
  const transport = http(node.url)
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 20 })
  const funded = new Set<Address>()
  const clientFor = (key: Hex): SdkClient =>
    createWalletClient({ account: privateKeyToAccount(key), chain, transport, pollingInterval: 20 })
  return {
    node,
    addresses,
    chain,
    artifacts,
    publicClient,
    deployer: clientFor(deployerKey),
    epoch: () => epoch,
    setEpoch(next) {
      if (next < epoch) throw new Error(`the chain does not go back from ${epoch} to ${next}`)
      epoch = next
    },
    async wallet(name) {
      const client = clientFor(keyOf(name))
      if (!funded.has(client.account.address)) {
        await node.setBalance(client.account.address, parseEther('100'))
        funded.add(client.account.address)
      }
      return client
    },
    mint: async (to, amount) => {
      await mintUsdfc(node.url, deployerKey, addresses.usdfc, to, amount)
    },
    async send(client, address, abi, functionName, args, value) {
      const { request } = await publicClient.simulateContract({
        account: client.account,
        address,
        abi: abi as Abi,
        functionName,
        args,
        value,
      })
      const hash = await client.writeContract(request as Parameters<SdkClient['writeContract']>[0])
      const receipt = await publicClient.waitForTransactionReceipt({ hash })
      if (receipt.status !== 'success') throw new Error(`${functionName} failed in ${hash} (gas used ${receipt.gasUsed})`)
      return receipt
    },
    close: () => node.close(),
  }
}

/** What a rejected call reverted with: the custom error's name and arguments, or the Error(string) reason. */
export async function revertOf(attempt: Promise<unknown>): Promise<{ errorName?: string; args?: readonly unknown[]; reason?: string }> {
  const error = await attempt.then(
    () => {
      throw new Error('the call did not revert')
    },
    (e: unknown) => e,
  )
  if (!(error instanceof BaseError)) throw error
  const reverted = error.walk((e) => e instanceof ContractFunctionRevertedError)
  if (!(reverted instanceof ContractFunctionRevertedError)) throw error
  if (reverted.reason !== undefined) return { reason: reverted.reason }
  return { errorName: reverted.data?.errorName, args: reverted.data?.args ?? [] }
}

/**
 * The challenges of a proof as PDPVerifier draws them (FilOzone/pdp src/PDPVerifier.sol
 * provePossession): leaf keccak256(seed ‖ setId ‖ uint64 i) mod challengeRange.
 */
export function challengedLeaves(seed: bigint, setId: bigint, count: number, challengeRange: bigint): bigint[] {
  const out: bigint[] = []
  for (let i = 0; i < count; i++) {
    const hash = keccak256(encodePacked(['uint256', 'uint256', 'uint64'], [seed, setId, BigInt(i)]))
    out.push(BigInt(hash) % challengeRange)
  }
  return out
}

/** Where a data-set leaf lies, worked out from the pieces' leaf counts in id order (removed pieces count 0). */
export function locate(leafIndex: bigint, leafCounts: bigint[]): { pieceId: bigint; offset: bigint } {
  let before = 0n
  for (const [id, count] of leafCounts.entries()) {
    if (leafIndex < before + count) return { pieceId: BigInt(id), offset: leafIndex - before }
    before += count
  }
  throw new Error(`leaf ${leafIndex} is beyond the data set`)
}

/** Merkle proofs for the challenged leaves, from the trees of the data set's pieces (by piece id). */
export function proofsFor(challenges: { pieceId: bigint; offset: bigint }[], trees: Map<bigint, PieceTree>) {
  return challenges.map(({ pieceId, offset }) => {
    const tree = trees.get(pieceId)
    if (tree === undefined) throw new Error(`no tree for piece ${pieceId}`)
    return tree.proof(Number(offset))
  })
}

/** Proxy-upgrade machinery of the real contracts: only the warm storage service's stand-in has a proxy (history.test.ts checks its shapes). */
const UPGRADE_ONLY = new Set([
  'UPGRADE_INTERFACE_VERSION',
  'announcePlannedUpgrade',
  'migrate',
  'proxiableUUID',
  'renounceOwnership',
  'upgradeToAndCall',
  'ContractUpgraded',
  'UpgradeAnnounced',
  'Upgraded',
])

/** Functions and events of the SDK's ABI (names, parameter and return types) that `ours` lacks, but for the upgrade machinery. */
export function missingFromAbi(sdk: readonly unknown[], ours: Abi, alsoAllowed: string[] = []): string[] {
  const describe = (item: AbiFunction | AbiEvent) =>
    `${item.type} ${formatAbiItem(item)} returns (${'outputs' in item ? formatAbiParams(item.outputs) : ''})`
  const entries = (abi: readonly unknown[]) =>
    (abi as (AbiFunction | AbiEvent | { type: string; name?: string })[]).filter(
      (x): x is AbiFunction | AbiEvent => x.type === 'function' || x.type === 'event',
    )
  const have = new Set(entries(ours).map(describe))
  return entries(sdk)
    .filter((x) => !UPGRADE_ONLY.has(x.name) && !alsoAllowed.includes(x.name))
    .map(describe)
    .filter((d) => !have.has(d))
}

/** Deterministic test data of a given length. */
export function testBytes(length: number, salt: number): Uint8Array {
  const out = new Uint8Array(length)
  let x = (salt * 2654435761) >>> 0
  for (let i = 0; i < length; i++) {
    x = (x * 1103515245 + 12345) >>> 0
    out[i] = x >>> 24
  }
  return out
}
