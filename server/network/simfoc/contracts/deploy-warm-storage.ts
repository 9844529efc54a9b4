/**
 * TEMPORARY STUB (branch simfoc-pay only): helper "pdp" writes the real
 * deploy-warm-storage.ts (PDPVerifier, FilecoinWarmStorageService and its view);
 * the lead replaces this file with theirs at merge. It deploys nothing and
 * answers zero addresses so that deploy.ts type-checks and its pay-side half
 * can be tested on its own.
 */
import { zeroAddress, type Address, type PublicClient, type WalletClient } from 'viem'
import type { FocArtifacts } from './compile.ts'

export async function deployWarmStorage(
  _wallet: WalletClient,
  _publicClient: PublicClient,
  _artifacts: FocArtifacts,
  _deps: { usdfc: Address; filecoinPay: Address; serviceProviderRegistry: Address; sessionKeyRegistry: Address; endorsements: Address },
): Promise<{ pdp: Address; fwss: Address; fwssView: Address }> {
  return { pdp: zeroAddress, fwss: zeroAddress, fwssView: zeroAddress }
}
