/**
 * An upgrade of the warm storage service as its owner makes one on
 * calibration and mainnet (filecoin-services service_contracts/tools/
 * warm-storage-announce-upgrade.sh in its legacy mode, then
 * warm-storage-execute-upgrade.sh): a new implementation and a new state view
 * are deployed, the upgrade is announced (announcePlannedUpgrade, for the next
 * epoch at the soonest), and once that epoch has come the proxy is moved to
 * the implementation with upgradeToAndCall(implementation,
 * migrate(view)): the service then points at the new view, at a new address.
 */
import {
  encodeFunctionData,
  keccak256,
  parseEventLogs,
  toHex,
  type Abi,
  type Address,
  type Hex,
  type PublicClient,
  type WalletClient,
} from 'viem'
import { loadFocArtifacts, type FocArtifacts } from './compile.ts'
import { addressAt, callAll, deployAll, focClients, nextNonce, type ContractCall, type Deployment } from './send.ts'

export class WarmStorageDeployError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'WarmStorageDeployError'
  }
}

/** What the service's implementation is built with: the contracts it calls, immutables of each implementation. */
export interface FwssImplementationArgs {
  pdp: Address
  filecoinPay: Address
  usdfc: Address
  /** FilBeam's beneficiary; no CDN runs on the simulated network, so the deployer stands in. */
  filBeamBeneficiary: Address
  serviceProviderRegistry: Address
  sessionKeyRegistry: Address
}

/** The libraries the service's implementation links. */
export interface FwssLibraries {
  signatures: Address
  rails: Address
  upgrades: Address
}

/** What an upgrade moves the service to. */
export interface WarmStorageRelease {
  implementation: Address
  view: Address
}

/** OpenZeppelin 5 Initializable's storage (ERC-7201 "openzeppelin.storage.Initializable"): the version last initialised, low 64 bits. */
export const INITIALIZABLE_SLOT = '0xf0c57e16840df040f15088dc2f81fe391c3923bec73e23a9662efc9c229c6a00'
/** ERC-1967's implementation slot. */
export const IMPLEMENTATION_SLOT = '0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc'

export function artifact(artifacts: FocArtifacts, name: string): { abi: Abi; bytecode: Hex } {
  const found = artifacts[name]
  if (found === undefined) throw new WarmStorageDeployError(`no compiled contract named ${name}`)
  return found
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

/** The three libraries, in deployment order. */
export const FWSS_LIBRARY_NAMES = ['FwssSignatures', 'FwssRails', 'FwssUpgrades'] as const

export function libraryDeployments(artifacts: FocArtifacts): Deployment[] {
  return FWSS_LIBRARY_NAMES.map((name) => ({ name, ...artifact(artifacts, name) }))
}

/** An implementation of the service, linked to `libraries`, whose migrate() sets `reinitializerVersion`. */
export function fwssImplementation(
  artifacts: FocArtifacts,
  args: FwssImplementationArgs,
  libraries: FwssLibraries,
  reinitializerVersion: bigint,
): Deployment {
  const fwss = artifact(artifacts, 'FilecoinWarmStorageService')
  return {
    name: 'FilecoinWarmStorageService',
    abi: fwss.abi,
    bytecode: linkLibraries(fwss.bytecode, {
      'FilecoinWarmStorageService.sol:FwssSignatures': libraries.signatures,
      'FwssRails.sol:FwssRails': libraries.rails,
      'FilecoinWarmStorageService.sol:FwssUpgrades': libraries.upgrades,
    }),
    args: [
      args.pdp,
      args.filecoinPay,
      args.usdfc,
      args.filBeamBeneficiary,
      args.serviceProviderRegistry,
      args.sessionKeyRegistry,
      reinitializerVersion,
    ],
  }
}

/** The GA (1.3.1) state view of the service behind `fwss`. */
export const gaView = (artifacts: FocArtifacts, fwss: Address): Deployment => ({
  name: 'FilecoinWarmStorageServiceStateView',
  ...artifact(artifacts, 'FilecoinWarmStorageServiceStateView'),
  args: [fwss],
})

/** Resolves once the chain's head has reached `epoch`. */
export type UntilEpoch = (epoch: bigint) => Promise<void>

/** Asks the node for its head until it reaches the epoch: the wall clock's chain moves on by itself. */
export const pollUntilEpoch =
  (publicClient: PublicClient): UntilEpoch =>
  async (epoch) => {
    while ((await publicClient.getBlockNumber({ cacheTime: 0 })) < epoch) await new Promise((r) => setTimeout(r, 25))
  }

/**
 * Announces the upgrade to `release`, waits for its epoch, and upgrades the proxy at `fwss` with
 * migrate(view). `along`: calls sent in the same batch before the announcement.
 */
export async function upgradeWarmStorage(
  wallet: WalletClient,
  publicClient: PublicClient,
  artifacts: FocArtifacts,
  fwss: Address,
  release: WarmStorageRelease,
  options: { untilEpoch?: UntilEpoch; along?: ContractCall[] } = {},
): Promise<void> {
  const abi = artifact(artifacts, 'FilecoinWarmStorageService').abi
  const untilEpoch = options.untilEpoch ?? pollUntilEpoch(publicClient)
  const receipts = await callAll(wallet, publicClient, [
    ...(options.along ?? []),
    {
      what: 'FilecoinWarmStorageService.announcePlannedUpgrade',
      address: fwss,
      abi,
      functionName: 'announcePlannedUpgrade',
      // an epoch already passed: the service makes it the next one
      args: [{ nextImplementation: release.implementation, afterEpoch: 0n }],
    },
  ])
  const announced = receipts[receipts.length - 1]
  const [event] = parseEventLogs({ abi, logs: announced.logs, eventName: 'UpgradeAnnounced' }) as unknown as [
    { args: { plannedUpgrade: { afterEpoch: bigint } } },
  ]
  await untilEpoch(event.args.plannedUpgrade.afterEpoch)
  await callAll(wallet, publicClient, [
    {
      what: 'FilecoinWarmStorageService.upgradeToAndCall',
      address: fwss,
      abi,
      functionName: 'upgradeToAndCall',
      args: [release.implementation, encodeFunctionData({ abi, functionName: 'migrate', args: [release.view] })],
    },
  ])
}

/**
 * Upgrades the running service at `fwss` once more, as its owner (`ownerKey`): new libraries, a
 * new implementation built with the same contracts (read from the proxy) and the next
 * reinitializer version, and a new GA view; then the announced upgrade and migrate(view).
 */
export async function migrateWarmStorage(
  rpcUrl: string,
  ownerKey: Hex,
  fwss: Address,
  untilEpoch?: UntilEpoch,
): Promise<WarmStorageRelease> {
  const { wallet, publicClient } = await focClients(rpcUrl, ownerKey)
  const artifacts = await loadFocArtifacts()
  const abi = artifact(artifacts, 'FilecoinWarmStorageService').abi
  const read = (functionName: string) => publicClient.readContract({ address: fwss, abi, functionName }) as Promise<Address>
  const [pdp, filecoinPay, usdfc, filBeamBeneficiary, serviceProviderRegistry, sessionKeyRegistry] = await Promise.all(
    [
      'pdpVerifierAddress',
      'paymentsContractAddress',
      'usdfcTokenAddress',
      'filBeamBeneficiaryAddress',
      'serviceProviderRegistry',
      'sessionKeyRegistry',
    ].map(read),
  )
  const initialized = BigInt((await publicClient.getStorageAt({ address: fwss, slot: INITIALIZABLE_SLOT })) ?? '0x0') & 0xffffffffffffffffn
  const first = await nextNonce(wallet, publicClient)
  const libraries = { signatures: addressAt(wallet, first, 0), rails: addressAt(wallet, first, 1), upgrades: addressAt(wallet, first, 2) }
  const args = { pdp, filecoinPay, usdfc, filBeamBeneficiary, serviceProviderRegistry, sessionKeyRegistry }
  const [, , , implementation, view] = await deployAll(wallet, publicClient, first, [
    ...libraryDeployments(artifacts),
    fwssImplementation(artifacts, args, libraries, initialized + 1n),
    gaView(artifacts, fwss),
  ])
  const release = { implementation, view }
  await upgradeWarmStorage(wallet, publicClient, artifacts, fwss, release, { untilEpoch })
  return release
}
