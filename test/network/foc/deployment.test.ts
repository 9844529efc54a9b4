const SEED = 'deployment'

/**
 * The client finds an Onchain Cloud from its warm storage service alone and
 * refuses one it cannot store on (issue 44): another chain, an address with
 * no contract, a contract that is not FWSS. Against the simulated Onchain
 * Cloud, whose other addresses land wherever its deployer's nonces put them.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createPublicClient, createWalletClient, http, keccak256, parseAbi, toHex } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { focClientOn } from '../../simulation/simfoc/sdk-chain.ts'
import { FOC_CHAIN_IDS } from '../../../server/network/foc/chain.ts'
import { FocDeploymentError, readFocDeployment } from '../../../server/network/foc/deployment.ts'
import { startSimulatedFoc, type SimulatedFoc } from '../../../server/simulation/simfoc/index.ts'

describe('finding an Onchain Cloud from its warm storage service', () => {
  let dir: string
  let foc: SimulatedFoc
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'foc-deployment-'))
    foc = await startSimulatedFoc({ dir, seed: SEED, genesisTimestamp: Date.now() / 1000, epochSeconds: 0.1, providerCount: 1 })
  }, 180_000)
  afterAll(async () => {
    await foc?.close()
    rmSync(dir, { recursive: true, force: true })
  })
  const reader = () => createPublicClient({ transport: http(foc.rpcUrl) })
  const anchors = () => ({ fwss: foc.contracts.fwss, multicall3: foc.contracts.multicall3, endorsements: foc.contracts.endorsements })
  const refusal = (attempt: Promise<unknown>) =>
    attempt.then(
      () => undefined,
      (err: unknown) => (err instanceof FocDeploymentError ? { code: err.code, message: err.message } : err),
    )

  it('reads every other address from FWSS, with the versions, on the chain id asked', async () => {
    const found = await readFocDeployment(reader(), anchors(), [FOC_CHAIN_IDS.devnet])
    expect(found.chainId).toBe(31_415_926)
    expect(foc.contracts).toMatchObject(found.contracts)
    expect(found.versions).toEqual({ fwss: '1.3.1', pdpVerifier: '3.4.0' })
  })

  it('refuses another chain, naming both ids: a calibration node under NETWORK=mainnet', async () => {
    expect(await refusal(readFocDeployment(reader(), anchors(), [FOC_CHAIN_IDS.mainnet]))).toEqual({
      code: 'WRONG_CHAIN',
      message: "chain 31415926 (the Synapse SDK's devnet), not 314 (mainnet)",
    })
  })

  it('refuses an anchor with no contract, and a contract that is not a warm storage service', async () => {
    const nobody = privateKeyToAccount(`0x${'11'.repeat(32)}`).address
    expect(await refusal(readFocDeployment(reader(), { ...anchors(), fwss: nobody }, [FOC_CHAIN_IDS.devnet]))).toEqual({
      code: 'NO_CONTRACT',
      message: `no contract at ${nobody}, where the warm storage service (FWSS) should be`,
    })
    expect(await refusal(readFocDeployment(reader(), { ...anchors(), endorsements: nobody }, [FOC_CHAIN_IDS.devnet]))).toMatchObject({
      code: 'NO_CONTRACT',
      message: `no contract at ${nobody}, where the endorsement set should be`,
    })
    const notFwss = await refusal(readFocDeployment(reader(), { ...anchors(), fwss: foc.contracts.pdp }, [FOC_CHAIN_IDS.devnet]))
    expect(notFwss).toMatchObject({ code: 'NOT_GA' })
    expect((notFwss as Error).message).toMatch(/^the warm storage service \(FWSS\) at 0x\w+ does not answer viewContractAddress\(\), /)
  })

  it('follows a migration while it runs: the verbs go on with the view FWSS points at now, said once in the log', async () => {
    const said: string[] = []
    const logger = { info: (_: object, msg: string) => said.push(msg), warn: (_: object, msg: string) => said.push(msg) }
    const client = await focClientOn(foc, privateKeyToAccount(generatePrivateKey()), { recheckMs: 0, logger: logger as never })
    const before = client.deployment().contracts.fwssView
    const after = await foc.migrate()
    expect(after).not.toBe(before)
    await client.funding(1_000)
    expect(client.deployment().contracts.fwssView).toBe(after)
    expect(client.chain.contracts.fwssView.address).toBe(after)
    await client.funding(1_000)
    expect(said.filter((m) => /^the warm storage service was migrated/.test(m))).toHaveLength(1)
  }, 120_000)

  it('refuses a view from before GA where FWSS points, at start and in every verb after such a migration', async () => {
    const client = await focClientOn(foc, privateKeyToAccount(generatePrivateKey()), { recheckMs: 0 })
    // The service's owner points FWSS back at the 1.2.0 view it started with (setViewContract, owner only).
    const owner = privateKeyToAccount(keccak256(toHex(`simulated FOC ${SEED}: deployer`)))
    const wallet = createWalletClient({ account: owner, transport: http(foc.rpcUrl) })
    const [oldView] = foc.contracts.formerFwssViews
    const hash = await wallet.writeContract({
      address: foc.contracts.fwss,
      abi: parseAbi(['function setViewContract(address)']),
      functionName: 'setViewContract',
      args: [oldView!],
      chain: null,
    })
    await reader().waitForTransactionReceipt({ hash })
    expect(await refusal(readFocDeployment(reader(), anchors(), [FOC_CHAIN_IDS.devnet]))).toEqual({
      code: 'NOT_GA',
      message: `the warm storage service's view at ${oldView}, where FWSS points, has no getPriceList(): a view from before GA (1.3)`,
    })
    expect(await refusal(client.funding(1_000))).toMatchObject({ code: 'NOT_GA' })
  }, 120_000)
})
