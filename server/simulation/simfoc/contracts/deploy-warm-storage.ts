/**
 * Deploys the proof and warm-storage half of the simulated Onchain Cloud with
 * the history calibration and mainnet have: PDPVerifier; the warm storage
 * service behind an ERC1967Proxy, initialised through it as the real deploy
 * scripts do (filecoin-services service_contracts/tools/warm-storage-deploy-all.sh,
 * FilOzone/pdp 3.4.0's constructor arguments), pointed first at a 1.2.0 state
 * view; then upgraded to a second implementation and migrated to the GA
 * (1.3.1) view at another address, as calibration and mainnet were for 1.3.0
 * (upgrade-warm-storage.ts). Clients that read the view's address from the
 * service find the GA one; the 1.2.0 one still stands where it was.
 */
import { encodeDeployData, type Abi, type Address, type Hex, type PublicClient, type WalletClient } from 'viem'
import type { FixedAddresses } from '../chain-profiles.ts'
import type { FocArtifacts } from './compile.ts'
import { addressAt, deployAll, nextNonce, type ContractCall } from './send.ts'
import {
  artifact,
  fwssImplementation,
  gaView,
  libraryDeployments,
  upgradeWarmStorage,
  WarmStorageDeployError,
  type UntilEpoch,
} from './upgrade-warm-storage.ts'

export { linkLibraries, WarmStorageDeployError } from './upgrade-warm-storage.ts'

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

/** Creates a contract at a published address: the simulated chain's pre-history step (EvmNode.placeContract), from the deployer. */
export type PlaceContract = (address: Address, initcode: Hex) => Promise<void>

export interface WarmStorageDeployment {
  pdp: Address
  /** The service's proxy: every client's address for it. */
  fwss: Address
  /** The view the service points at now (the GA one). */
  fwssView: Address
  /** The implementation the proxy runs now. */
  fwssImplementation: Address
  /** The views the service pointed at before, oldest first: the 1.2.0 one. */
  formerFwssViews: Address[]
}

export async function deployWarmStorage(
  wallet: WalletClient,
  publicClient: PublicClient,
  artifacts: FocArtifacts,
  deps: { usdfc: Address; filecoinPay: Address; serviceProviderRegistry: Address; sessionKeyRegistry: Address },
  options: WarmStorageOptions & {
    /** Calibration's or mainnet's addresses for the proxy and the 1.2.0 view, and the means to create a contract there. */
    fixed?: { addresses: FixedAddresses; place: PlaceContract }
    untilEpoch?: UntilEpoch
  } = {},
): Promise<WarmStorageDeployment> {
  const account = wallet.account
  if (account === undefined) throw new WarmStorageDeployError('the wallet client has no account')
  const schedule = { ...WARM_STORAGE_DEFAULTS, ...options }
  const fixed = options.fixed
  const proxyArtifact = artifact(artifacts, 'ERC1967Proxy')
  const view120Artifact = artifact(artifacts, 'FilecoinWarmStorageServiceStateView120')

  // Every address follows from the deployer's nonce, so the deployments go out at once and one
  // wait covers them (the node may include them only at the next epoch). On a devnet the proxy
  // and the 1.2.0 view are deployed too; on calibration's and mainnet's profiles they are created
  // at their published addresses right after.
  const first = await nextNonce(wallet, publicClient)
  const at = (offset: number) => addressAt(wallet, first, offset)
  const pdp = at(0)
  const libraries = { signatures: at(1), rails: at(2), upgrades: at(3) }
  const firstImplementation = at(4)
  const secondImplementation = at(5)
  const view = at(6)
  const fwss = fixed?.addresses.fwss ?? at(7)
  const view120 = fixed?.addresses.fwssView120 ?? at(8)
  const args = { ...deps, pdp, filBeamBeneficiary: account.address }
  const proxy = { name: 'ERC1967Proxy', ...proxyArtifact, args: [firstImplementation, '0x'] }
  const oldView = { name: 'FilecoinWarmStorageServiceStateView120', ...view120Artifact, args: [fwss] }
  await deployAll(wallet, publicClient, first, [
    // PDPVerifier 3.4.0's implementation takes (initializer version, challenge finality)
    { name: 'PDPVerifier', ...artifact(artifacts, 'PDPVerifier'), args: [1n, schedule.challengeFinality] },
    ...libraryDeployments(artifacts),
    fwssImplementation(artifacts, args, libraries, 1n),
    fwssImplementation(artifacts, args, libraries, 2n),
    gaView(artifacts, fwss),
    ...(fixed ? [] : [proxy, oldView]),
  ])
  if (fixed) {
    await fixed.place(fwss, initcode(proxy))
    await fixed.place(view120, initcode(oldView))
  }

  // The initialisations the real proxies run and the service pointed at its first view; then the
  // upgrade calibration and mainnet had, to the GA view, announced in the same batch.
  const fwssAbi = artifact(artifacts, 'FilecoinWarmStorageService').abi
  const initialisations: ContractCall[] = [
    { what: 'PDPVerifier.initialize', address: pdp, abi: artifact(artifacts, 'PDPVerifier').abi, functionName: 'initialize' },
    {
      what: 'FilecoinWarmStorageService.initialize',
      address: fwss,
      abi: fwssAbi,
      functionName: 'initialize',
      args: [schedule.maxProvingPeriod, schedule.challengeWindowSize, account.address /* FilBeam controller */],
    },
    { what: 'FilecoinWarmStorageService.setViewContract', address: fwss, abi: fwssAbi, functionName: 'setViewContract', args: [view120] },
  ]
  await upgradeWarmStorage(
    wallet,
    publicClient,
    artifacts,
    fwss,
    { implementation: secondImplementation, view },
    { untilEpoch: options.untilEpoch, along: initialisations },
  )
  return { pdp, fwss, fwssView: view, fwssImplementation: secondImplementation, formerFwssViews: [view120] }
}

/** Creation code with its constructor arguments, as a deployment transaction carries it. */
function initcode(d: { abi: Abi; bytecode: Hex; args: readonly unknown[] }): Hex {
  return encodeDeployData({ abi: d.abi, bytecode: d.bytecode, args: d.args } as Parameters<typeof encodeDeployData>[0])
}
