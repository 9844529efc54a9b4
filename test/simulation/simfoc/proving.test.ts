import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { getPDPProviders } from '@filoz/synapse-core/sp-registry'
import { createPublicClient, http, parseAbi, parseEther, parseUnits } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, describe, expect, it } from 'vitest'
import { focChainOn, focClientOn } from './sdk-chain.ts'
import { startSimulatedFoc } from '../../../server/simulation/simfoc/index.ts'

const abi = parseAbi([
  'function getPDPConfig() view returns (uint64, uint256, uint256, uint256)',
  'function getChallengeFinality() view returns (uint256)',
  'function provingDeadline(uint256 setId) view returns (uint256)',
  'function provingActivationEpoch(uint256 setId) view returns (uint256)',
])

describe("the simulated Onchain Cloud's proving schedule (SIMFOC_PROVING)", () => {
  const dir = mkdtempSync(join(tmpdir(), 'simfoc-proving-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  const start = (proving?: 'calibration' | 'mainnet') =>
    startSimulatedFoc({ dir, seed: 'proving', genesisTimestamp: Date.now() / 1000, epochSeconds: 0.05, providerCount: 1, proving })

  it("deploys mainnet's 2880/60/150 when asked, keeps it across a restart, and refuses another schedule on the same chain", async () => {
    const foc = await start('mainnet')
    try {
      expect(foc.proving).toBe('mainnet')
      const chain = focChainOn(foc)
      const client = createPublicClient({ chain, transport: http(foc.rpcUrl) })
      const [period, window] = await client.readContract({ address: foc.contracts.fwssView, abi, functionName: 'getPDPConfig' })
      const finality = await client.readContract({ address: foc.contracts.pdp, abi, functionName: 'getChallengeFinality' })
      // A proof a day (2 880 epochs of 30 s), due in the last 60 epochs of the period, challenges 150 epochs ahead.
      expect([period, window, finality]).toEqual([2880n, 60n, 150n])
      // The providers offer to prove as often as the service asks.
      const { providers } = await getPDPProviders(client, {})
      expect(providers.map((p) => p.pdp.minProvingPeriodInEpochs)).toEqual([2880n])
    } finally {
      await foc.close()
    }
    // The schedule is the chain's: the same one resumes, another is refused with the way out.
    await (await start('mainnet')).close()
    await expect(start()).rejects.toThrow(
      /proves on mainnet's 2880\/60\/150 epochs \(period\/window\/finality\), not calibration's 240\/20\/10: .* set SIMFOC_PROVING=mainnet/,
    )
  }, 120_000)

  it("on mainnet's schedule, the gateway's client says a committed copy's first proof is due a day after it is added, as the chain's schedule has it", async () => {
    const own = mkdtempSync(join(tmpdir(), 'simfoc-proving-'))
    const foc = await startSimulatedFoc({
      dir: own,
      seed: 'first proof',
      genesisTimestamp: Date.now() / 1000,
      epochSeconds: 0.05,
      providerCount: 1,
      proving: 'mainnet',
    })
    try {
      const account = privateKeyToAccount(generatePrivateKey())
      await foc.faucet(account.address, { fil: parseEther('10'), usdfc: parseUnits('100', 18) })
      const chain = focChainOn(foc)
      const client = await focClientOn(foc, account)
      await client.fund((await client.funding(1_000)).depositNeeded + parseUnits('5', 18))
      const { copies } = await client.store(new Uint8Array(1_000).fill(7), { copies: 1 })
      const [copy] = copies
      const view = createPublicClient({ chain, transport: http(foc.rpcUrl) })
      const read = (functionName: 'provingDeadline' | 'provingActivationEpoch') =>
        view.readContract({ address: foc.contracts.fwssView, abi, functionName, args: [copy.dataSetId] })
      // The provider starts proving the new data set (Curio's first nextProvingPeriod) soon after the add.
      for (let i = 0; i < 600 && (await read('provingActivationEpoch')) === 0n; i++) await new Promise((r) => setTimeout(r, 50))
      const activation = Number(await read('provingActivationEpoch'))
      expect(activation).toBeGreaterThanOrEqual(copy.addedEpoch)
      const proof = await client.copyProof(copy)
      expect(proof.proved).toBe(false)
      expect([proof.maxProvingPeriod, proof.challengeWindow]).toEqual([2880, 60])
      // Due when the challenge window of the data set's first proving period opens: its deadline, 60 epochs before.
      expect(proof.firstProofDueEpoch).toBe(Number(await read('provingDeadline')) - 60)
      expect(proof.firstProofDueEpoch).toBe(activation + 2880 - 60)
    } finally {
      await foc.close()
      rmSync(own, { recursive: true, force: true })
    }
  }, 180_000)
})
