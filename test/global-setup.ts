import { loadFocArtifacts } from '../server/simulation/simfoc/contracts/compile.ts'

/**
 * Compiles the simulated Onchain Cloud's contracts once before the test files
 * run (about 20 s of solc on a clean clone, then cached), rather than in every
 * test process that deploys them at once.
 */
export default async function setup(): Promise<void> {
  await loadFocArtifacts()
}
