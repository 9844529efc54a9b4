/**
 * Deploys the proof and warm-storage half of the simulated Onchain Cloud:
 * PDPVerifier, FilecoinWarmStorageService (with the two libraries it links, as
 * the real 1.3.1 service links SignatureVerificationLib and Rails) and its
 * state view, then initialises them as the real deploy scripts do through
 * their proxies (filecoin-services service_contracts/tools/warm-storage-deploy-all.sh,
 * FilOzone/pdp 3.4.0's constructor arguments).
 */
import {
  getContractAddress,
  keccak256,
  toHex,
  type Abi,
  type Address,
  type Hash,
  type Hex,
  type PublicClient,
  type WalletClient,
} from 'viem'
import type { FocArtifacts } from './compile.ts'

/** The proving schedule; the defaults are calibnet's (filecoin-services service_contracts/tools/README.md). */
export interface WarmStorageOptions {
  /** Epochs the challenge must lie ahead of nextProvingPeriod (PDPVerifier 3.4.0 constructor); calibnet 10. */
  challengeFinality?: bigint
  /** Epochs between two proofs' deadlines; calibnet 240, mainnet 2880. */
  maxProvingPeriod?: bigint
  /** Epochs before a deadline in which the challenge falls and the proof is due; calibnet 20, mainnet 60. */
  challengeWindowSize?: bigint
}

export const WARM_STORAGE_DEFAULTS: Required<WarmStorageOptions> = {
  challengeFinality: 10n,
  maxProvingPeriod: 240n,
  challengeWindowSize: 20n,
}

export class WarmStorageDeployError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'WarmStorageDeployError'
  }
}

/**
 * solc leaves `__$<34 hex>$__` where a linked library's address goes: the first 34 hex digits of
 * the keccak-256 of the library's fully qualified name (`File.sol:Library`). Every one of them
 * must be given.
 */
export function linkLibraries(bytecode: Hex, libraries: Record<string, Address>): Hex {
  let linked: string = bytecode
  for (const [qualifiedName, address] of Object.entries(libraries)) {
    const placeholder = `__$${keccak256(toHex(qualifiedName)).slice(2, 36)}$__`
    linked = linked.split(placeholder).join(address.slice(2).toLowerCase())
  }
  if (!/^0x[0-9a-fA-F]*$/.test(linked)) throw new WarmStorageDeployError('the service code has an unlinked reference left')
  return linked as Hex
}

function artifact(artifacts: FocArtifacts, name: string): { abi: Abi; bytecode: Hex } {
  const found = artifacts[name]
  if (found === undefined) throw new WarmStorageDeployError(`no compiled contract named ${name}`)
  return found
}

export async function deployWarmStorage(
  wallet: WalletClient,
  publicClient: PublicClient,
  artifacts: FocArtifacts,
  deps: { usdfc: Address; filecoinPay: Address; serviceProviderRegistry: Address; sessionKeyRegistry: Address; endorsements: Address },
  options: WarmStorageOptions = {},
): Promise<{ pdp: Address; fwss: Address; fwssView: Address }> {
  const account = wallet.account
  if (account === undefined) throw new WarmStorageDeployError('the wallet client has no account')
  const schedule = { ...WARM_STORAGE_DEFAULTS, ...options }
  const pdpArtifact = artifact(artifacts, 'PDPVerifier')
  const signaturesArtifact = artifact(artifacts, 'FwssSignatures')
  const railsArtifact = artifact(artifacts, 'FwssRails')
  const fwssArtifact = artifact(artifacts, 'FilecoinWarmStorageService')
  const viewArtifact = artifact(artifacts, 'FilecoinWarmStorageServiceStateView')

  // Every address follows from the deployer's nonce, so the five deployments go out at once
  // and one wait covers them (the node may include them only at the next epoch).
  const first = await publicClient.getTransactionCount({ address: account.address, blockTag: 'pending' })
  const at = (offset: number) => getContractAddress({ from: account.address, nonce: BigInt(first + offset) })
  const pdp = at(0)
  const signatures = at(1)
  const rails = at(2)
  const fwss = at(3)
  const fwssView = at(4)

  const deployments: { name: string; abi: Abi; bytecode: Hex; args: readonly unknown[]; address: Address }[] = [
    // PDPVerifier 3.4.0's implementation takes (initializer version, challenge finality)
    { name: 'PDPVerifier', ...pdpArtifact, args: [1n, schedule.challengeFinality], address: pdp },
    { name: 'FwssSignatures', ...signaturesArtifact, args: [], address: signatures },
    { name: 'FwssRails', ...railsArtifact, args: [], address: rails },
    {
      name: 'FilecoinWarmStorageService',
      abi: fwssArtifact.abi,
      bytecode: linkLibraries(fwssArtifact.bytecode, {
        'FilecoinWarmStorageService.sol:FwssSignatures': signatures,
        'FwssRails.sol:FwssRails': rails,
      }),
      // the deployer stands in as FilBeam's beneficiary: no CDN runs on the simulated network
      args: [pdp, deps.filecoinPay, deps.usdfc, account.address, deps.serviceProviderRegistry, deps.sessionKeyRegistry, 1n],
      address: fwss,
    },
    { name: 'FilecoinWarmStorageServiceStateView', ...viewArtifact, args: [fwss], address: fwssView },
  ]
  const sent: { what: string; hash: Hash; address?: Address }[] = []
  for (const [index, d] of deployments.entries()) {
    const hash = await wallet.deployContract({
      abi: d.abi,
      bytecode: d.bytecode,
      args: d.args as unknown[],
      account,
      chain: wallet.chain,
      nonce: first + index,
    })
    sent.push({ what: `deploying ${d.name}`, hash, address: d.address })
  }
  await confirm(publicClient, sent)

  // Then the initialisations the real proxies run, and the service learns its view.
  const calls: { what: string; address: Address; abi: Abi; functionName: string; args: readonly unknown[] }[] = [
    { what: 'PDPVerifier.initialize', address: pdp, abi: pdpArtifact.abi, functionName: 'initialize', args: [] },
    {
      what: 'FilecoinWarmStorageService.initialize',
      address: fwss,
      abi: fwssArtifact.abi,
      functionName: 'initialize',
      args: [schedule.maxProvingPeriod, schedule.challengeWindowSize, account.address /* FilBeam controller */],
    },
    {
      what: 'FilecoinWarmStorageService.setViewContract',
      address: fwss,
      abi: fwssArtifact.abi,
      functionName: 'setViewContract',
      args: [fwssView],
    },
  ]
  const next = first + deployments.length
  const done: { what: string; hash: Hash }[] = []
  for (const [index, c] of calls.entries()) {
    const hash = await wallet.writeContract({
      address: c.address,
      abi: c.abi,
      functionName: c.functionName,
      args: c.args as unknown[],
      account,
      chain: wallet.chain,
      nonce: next + index,
    })
    done.push({ what: c.what, hash })
  }
  await confirm(publicClient, done)
  return { pdp, fwss, fwssView }
}

async function confirm(publicClient: PublicClient, sent: { what: string; hash: Hash; address?: Address }[]): Promise<void> {
  for (const { what, hash, address } of sent) {
    const receipt = await publicClient.waitForTransactionReceipt({ hash })
    if (receipt.status !== 'success') throw new WarmStorageDeployError(`${what} failed (transaction ${hash})`)
    if (address !== undefined && receipt.contractAddress?.toLowerCase() !== address.toLowerCase()) {
      throw new WarmStorageDeployError(`${what}: landed at ${receipt.contractAddress}, expected ${address}`)
    }
  }
}
