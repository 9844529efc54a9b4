/**
 * The proving schedules the simulated Onchain Cloud can be deployed with:
 * the warm storage service's proving period and challenge window, and
 * PDPVerifier's challenge finality, as the real deployments set them
 * (filecoin-services v1.3.x service_contracts/tools/warm-storage-deploy-all.sh
 * and its README.md: DEFAULT_MAX_PROVING_PERIOD, DEFAULT_CHALLENGE_WINDOW_SIZE,
 * DEFAULT_CHALLENGE_FINALITY). On mainnet a proof is due once a day, so a
 * copy is proved about a day after it is committed; calibration proves
 * every two hours for quicker trials.
 */
import { createPublicClient, http, parseAbi, type Address } from 'viem'
import type { WarmStorageOptions } from './contracts/deploy-warm-storage.ts'

export const PROVING_SCHEDULES = {
  calibration: { maxProvingPeriod: 240n, challengeWindowSize: 20n, challengeFinality: 10n },
  mainnet: { maxProvingPeriod: 2880n, challengeWindowSize: 60n, challengeFinality: 150n },
  /**
   * Calibration's period and finality with half the period as its window, for
   * tests that run the chain at 20-40 epochs a second on a loaded machine: a
   * proof takes a dozen round trips to the chain, which can outlast a 20-epoch
   * window there. The deployment script takes any window below the period
   * (warm-storage-deploy-all.sh, CHALLENGE_WINDOW_SIZE), so this is a devnet
   * the real contracts allow, not a rule of ours.
   */
  'wide-window': { maxProvingPeriod: 240n, challengeWindowSize: 120n, challengeFinality: 10n },
} as const satisfies Record<string, Required<WarmStorageOptions>>

export type ProvingScheduleName = keyof typeof PROVING_SCHEDULES

export class ProvingScheduleMismatch extends Error {
  override name = 'ProvingScheduleMismatch'
}

const scheduleAbi = parseAbi([
  'function getPDPConfig() view returns (uint64 maxProvingPeriod, uint256 challengeWindow, uint256 challengesPerProof, uint256 initChallengeWindowStart)',
  'function getChallengeFinality() view returns (uint256)',
])

/**
 * Checks that a resumed chain was deployed with the schedule asked for: the
 * schedule is set once, when the contracts are initialised, and PDPVerifier's
 * finality can never change, so another one needs a new chain.
 */
export async function checkDeployedSchedule(
  rpcUrl: string,
  contracts: { pdp: Address; fwssView: Address },
  name: ProvingScheduleName,
  dir: string,
): Promise<void> {
  const client = createPublicClient({ transport: http(rpcUrl) })
  const [[maxProvingPeriod, challengeWindowSize], challengeFinality] = await Promise.all([
    client.readContract({ address: contracts.fwssView, abi: scheduleAbi, functionName: 'getPDPConfig' }),
    client.readContract({ address: contracts.pdp, abi: scheduleAbi, functionName: 'getChallengeFinality' }),
  ])
  const deployed = { maxProvingPeriod, challengeWindowSize, challengeFinality }
  const wanted = PROVING_SCHEDULES[name]
  if (Object.entries(wanted).every(([key, value]) => deployed[key as keyof typeof deployed] === value)) return
  const other = Object.entries(PROVING_SCHEDULES).find(([, s]) =>
    Object.entries(s).every(([key, value]) => deployed[key as keyof typeof deployed] === value),
  )?.[0]
  const was = `${other ? `${other}'s ` : ''}${maxProvingPeriod}/${challengeWindowSize}/${challengeFinality}`
  throw new ProvingScheduleMismatch(
    `the simulated Onchain Cloud in ${dir} proves on ${was} epochs (period/window/finality), not ${name}'s ${wanted.maxProvingPeriod}/${wanted.challengeWindowSize}/${wanted.challengeFinality}: a schedule is set when the chain is made; remove ${dir} for a new chain, or set SIMFOC_PROVING=${other ?? 'to what it was'}`,
  )
}
