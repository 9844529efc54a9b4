import type { Address, PublicClient } from 'viem'
import type { FocContracts } from '../../shared/foc-contracts.ts'
import { fwssAbi, fwssViewAbi, pdpVerifierAbi } from './abi.ts'

/**
 * What a client must be told to find an Onchain Cloud: the warm storage
 * service's proxy (FWSS keeps the addresses of the others and is migrated in
 * place), Multicall3 (to read them in one call) and the endorsement set (no
 * FWSS getter names it).
 */
export type FocAnchors = Pick<FocContracts, 'fwss' | 'multicall3' | 'endorsements'>

/** Where an Onchain Cloud's contracts are and which generation they are, as its chain says now. */
export interface FocDeployment {
  chainId: number
  contracts: FocContracts
  /** VERSION() of the warm storage service's implementation and of PDPVerifier. */
  versions: { fwss: string; pdpVerifier: string }
}

/** Why the chain at hand is not one the client can store on; each says which part, with its address. */
export type FocDeploymentProblem = 'WRONG_CHAIN' | 'NO_CONTRACT' | 'NOT_GA'

export class FocDeploymentError extends Error {
  override name = 'FocDeploymentError'
  constructor(
    readonly code: FocDeploymentProblem,
    message: string,
  ) {
    super(message)
  }
}

/** The first warm storage generation this client speaks: GA (1.3.0, June 2026), with getPriceList and 13-field data sets. */
const FIRST_GA_FWSS = [1, 3, 0]

/** The addresses FWSS keeps, by the name the client's FocContracts gives each. */
const FWSS_GETTERS = {
  fwssView: 'viewContractAddress',
  pdp: 'pdpVerifierAddress',
  filecoinPay: 'paymentsContractAddress',
  usdfc: 'usdfcTokenAddress',
  serviceProviderRegistry: 'serviceProviderRegistry',
  sessionKeyRegistry: 'sessionKeyRegistry',
} as const
type ReadAddresses = Record<keyof typeof FWSS_GETTERS, Address>

/** What each contract is, in the words a log line or an error uses. */
export const CONTRACT_NAMES: Record<keyof FocContracts, string> = {
  fwss: 'the warm storage service (FWSS)',
  fwssView: "the warm storage service's view",
  pdp: 'PDPVerifier',
  filecoinPay: 'Filecoin Pay',
  usdfc: 'USDFC',
  serviceProviderRegistry: 'the provider registry',
  sessionKeyRegistry: 'the session key registry',
  multicall3: 'Multicall3',
  endorsements: 'the endorsement set',
}

/**
 * The addresses FWSS (at `anchors.fwss`) names now, read in one Multicall3
 * call: cheap enough to ask again and again for a migration.
 */
export async function readFwssAddresses(client: PublicClient, anchors: FocAnchors): Promise<ReadAddresses> {
  const names = Object.keys(FWSS_GETTERS) as (keyof ReadAddresses)[]
  const answers = await client.multicall({
    multicallAddress: anchors.multicall3,
    allowFailure: true,
    contracts: names.map((name) => ({ address: anchors.fwss, abi: fwssAbi, functionName: FWSS_GETTERS[name] })),
  })
  const failed = names.filter((_, i) => answers[i]!.status !== 'success')
  if (failed.length > 0) {
    throw new FocDeploymentError(
      'NOT_GA',
      `${CONTRACT_NAMES.fwss} at ${anchors.fwss} does not answer ${failed.map((n) => `${FWSS_GETTERS[n]}()`).join(', ')}: not a warm storage service this client knows`,
    )
  }
  return Object.fromEntries(names.map((name, i) => [name, answers[i]!.result as Address])) as ReadAddresses
}

/**
 * Finds an Onchain Cloud from its anchors alone and checks it: the chain is
 * one of `chainIds`; every contract has code; FWSS is GA or later and its
 * view answers getPriceList (a pre-GA view, such as the one an SDK release
 * may still name, does not). Throws FocDeploymentError saying what is wrong;
 * a node that does not answer throws viem's error.
 *
 * @example const deployment = await readFocDeployment(client, PUBLISHED_ANCHORS.calibration, [314159])
 */
export async function readFocDeployment(client: PublicClient, anchors: FocAnchors, chainIds: readonly number[]): Promise<FocDeployment> {
  const chainId = await client.getChainId()
  if (!chainIds.includes(chainId)) {
    throw new FocDeploymentError('WRONG_CHAIN', `chain ${chainName(chainId)}, not ${chainIds.map(chainName).join(' or ')}`)
  }
  await expectCode(client, { multicall3: anchors.multicall3, fwss: anchors.fwss })
  const read = await readFwssAddresses(client, anchors)
  const contracts: FocContracts = { ...anchors, ...read }
  await expectCode(client, { ...read, endorsements: anchors.endorsements })
  const [fwssVersion, pdpVersion, priceList] = await client.multicall({
    multicallAddress: anchors.multicall3,
    allowFailure: true,
    contracts: [
      { address: contracts.fwss, abi: fwssAbi, functionName: 'VERSION' },
      { address: contracts.pdp, abi: pdpVerifierAbi, functionName: 'VERSION' },
      { address: contracts.fwssView, abi: fwssViewAbi, functionName: 'getPriceList' },
    ],
  })
  const fwss = fwssVersion.status === 'success' ? fwssVersion.result : undefined
  if (fwss === undefined || olderThan(fwss, FIRST_GA_FWSS)) {
    throw new FocDeploymentError(
      'NOT_GA',
      `${CONTRACT_NAMES.fwss} at ${contracts.fwss} is version ${fwss ?? 'unknown'}, older than GA (${FIRST_GA_FWSS.join('.')})`,
    )
  }
  if (priceList.status !== 'success') {
    throw new FocDeploymentError(
      'NOT_GA',
      `${CONTRACT_NAMES.fwssView} at ${contracts.fwssView}, where FWSS points, has no getPriceList(): a view from before GA (1.3)`,
    )
  }
  return { chainId, contracts, versions: { fwss, pdpVerifier: pdpVersion.status === 'success' ? pdpVersion.result : 'unknown' } }
}

const KNOWN_CHAINS: Record<number, string> = { 314: 'mainnet', 314_159: 'calibration', 31_415_926: "the Synapse SDK's devnet" }
const chainName = (id: number) => (KNOWN_CHAINS[id] ? `${id} (${KNOWN_CHAINS[id]})` : String(id))

/** Throws NO_CONTRACT for the first of `addresses` with no code on chain. */
async function expectCode(client: PublicClient, addresses: Partial<Record<keyof FocContracts, Address>>): Promise<void> {
  const entries = Object.entries(addresses) as [keyof FocContracts, Address][]
  const codes = await Promise.all(entries.map(([, address]) => client.getCode({ address })))
  const missing = entries.findIndex((_, i) => !codes[i] || codes[i] === '0x')
  if (missing >= 0) {
    const [name, address] = entries[missing]!
    throw new FocDeploymentError('NO_CONTRACT', `no contract at ${address}, where ${CONTRACT_NAMES[name]} should be`)
  }
}

/** Whether a VERSION string ("1.3.1") is older than `than`; one that is no version is older than anything. */
function olderThan(version: string, than: number[]): boolean {
  const parts = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version)?.slice(1).map(Number)
  if (!parts) return true
  for (let i = 0; i < than.length; i++) if (parts[i] !== than[i]) return parts[i]! < than[i]!
  return false
}
