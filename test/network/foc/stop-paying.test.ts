import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createPublicClient, http, parseAbi, parseEther, parseUnits, type Hash } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { focClientOn } from '../../simulation/simfoc/sdk-chain.ts'
import { fwssViewAbi } from '../../../server/network/foc/abi.ts'
import { addedCopy } from '../../../server/network/foc/added-copy.ts'
import type { FocClient, FocCopy } from '../../../server/network/foc/client.ts'
import type { FocContext } from '../../../server/network/foc/context.ts'
import { until } from '../../helpers/until.ts'
import { startSimulatedFoc, type SimulatedFoc } from '../../../server/simulation/simfoc/index.ts'

const USDFC = (n: string) => parseUnits(n, 18)

/** Filecoin Pay 1.0.0's rail view (src/FilecoinPayV1.sol getRail): what the payer is charged on a data set's PDP rail. */
const railAbi = parseAbi([
  'struct RailView { address token; address from; address to; address operator; address validator; uint256 paymentRate; uint256 lockupPeriod; uint256 lockupFixed; uint256 settledUpTo; uint256 endEpoch; uint256 commissionRateBps; address serviceFeeRecipient; }',
  'function getRail(uint256 railId) view returns (RailView)',
])

/**
 * What the PDP route's calls do on chain when a copy stops counting, read
 * from the simulated Onchain Cloud's contracts (FWSS 1.3.1, PDPVerifier
 * 3.4.0, Filecoin Pay 1.0.0): the copy adopted from the data set's pieces
 * whatever the add's receipt logged, a dead provider's data set ended by the
 * payer, a failed copy's piece removed, each with the payer's rails read back.
 * The route's choice of which to do is tested over a fake client (test/gateway/deals/pdp/).
 */
describe('stopping payment for PDP copies that no longer count, against the simulated FOC', () => {
  let dir: string
  let foc: SimulatedFoc
  let client: FocClient
  let chainClient: ReturnType<typeof createPublicClient>
  const copies: FocCopy[] = []
  const adds = new Map<number, Hash>()
  let pieceCid: string
  const account = privateKeyToAccount(generatePrivateKey())

  const rail = async (dataSetId: bigint) => {
    const info = await chainClient.readContract({
      address: client.chain.contracts.fwssView.address,
      abi: fwssViewAbi,
      functionName: 'getDataSet',
      args: [dataSetId],
    })
    return chainClient.readContract({
      address: client.chain.contracts.filecoinPay.address,
      abi: railAbi,
      functionName: 'getRail',
      args: [info.pdpRailId],
    })
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'foc-stop-paying-'))
    // 40 epochs a second: a proving period (240 epochs) is 6 s.
    foc = await startSimulatedFoc({ dir, seed: 'stop paying', genesisTimestamp: Date.now() / 1000, epochSeconds: 0.025, providerCount: 3 })
    await foc.faucet(account.address, { fil: parseEther('10'), usdfc: USDFC('100') })
    client = await focClientOn(foc, account)
    chainClient = createPublicClient({ chain: client.chain, transport: http(foc.rpcUrl) })
    await client.fund(USDFC('20'))
    const data = new Uint8Array(100_000).map((_, i) => (i * 31) % 253)
    const stored = await client.store(data, { copies: 2, onProgress: (e) => e.kind === 'adding' && adds.set(e.providerId, e.txHash) })
    copies.push(...stored.copies)
    pieceCid = stored.pieceCid
  }, 240_000)
  afterAll(async () => {
    await foc?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it("adopts a copy from its data set's pieces when the add's receipt carries no PiecesAdded (PDPVerifier 3.5.0 emits PiecesAddedV2)", async () => {
    expect(copies).toHaveLength(2)
    // The receipts as a newer verifier's would read to this client: no event it knows.
    const noEvents = {
      ...chainClient,
      getTransactionReceipt: async (a: { hash: Hash }) => ({ ...(await chainClient.getTransactionReceipt(a)), logs: [] }),
    } as unknown as FocContext['client']
    const context = { client: noEvents, chain: client.chain, payer: account.address }
    for (const copy of copies) {
      const outcome = await addedCopy(context, { txHash: adds.get(copy.providerId)!, providerId: copy.providerId, pieceCid })
      expect(outcome).toEqual({ status: 'added', copy })
    }
    // A transaction that went through but was no add (a deposit), and an add on a provider with no such piece: not adopted.
    const deposit = await client.fund(USDFC('1'))
    expect(await addedCopy(context, { txHash: deposit, providerId: copies[0].providerId, pieceCid })).toEqual({ status: 'failed' })
    const other = foc.providers.map((p) => Number(p.providerId)).find((id) => !copies.some((c) => c.providerId === id))!
    expect(await addedCopy(context, { txHash: adds.get(copies[0].providerId)!, providerId: other, pieceCid })).toEqual({ status: 'failed' })
  }, 60_000)

  it('ends a dead provider’s data set as the payer: its rail gets an end epoch and no longer adds to the lockup rate', async () => {
    const dead = copies[0]
    const before = await rail(dead.dataSetId)
    expect(before.endEpoch).toBe(0n)
    expect(before.paymentRate).toBeGreaterThan(0n)
    const lockupBefore = (await client.account()).lockupRatePerEpoch
    await foc.providers.find((p) => Number(p.providerId) === dead.providerId)!.provider.close()
    await expect(client.removeCopy(dead)).rejects.toThrow()

    const hash = await client.terminateDataSet(dead.dataSetId)
    expect(hash).toMatch(/^0x/)
    const after = await rail(dead.dataSetId)
    const head = await chainClient.getBlockNumber({ cacheTime: 0 })
    // Paid at most to the end of the lockup already set aside, then nothing.
    expect(after.endEpoch).toBeGreaterThan(0n)
    expect(after.endEpoch).toBeLessThanOrEqual(head + after.lockupPeriod)
    expect((await client.account()).lockupRatePerEpoch).toBe(lockupBefore - before.paymentRate)
    // Asked again (a restart): nothing more to end.
    expect(await client.terminateDataSet(dead.dataSetId)).toBeUndefined()
  }, 60_000)

  it('removes a failed copy’s piece through its provider: once its proving period ends the piece is gone and its rail’s rate drops', async () => {
    const failed = copies[1]
    const before = await rail(failed.dataSetId)
    expect(await client.removalState(failed)).toBe('live')
    const live = async () => (await client.pieceCopies({ pieceCid })).map((c) => [c.providerId, c.dataSetId, c.pieceId])
    expect(await live()).toContainEqual([failed.providerId, failed.dataSetId, failed.pieceId])
    await client.removeCopy(failed)
    expect(await client.removalState(failed)).toBe('scheduled')
    // Scheduled for removal: no longer among the piece's live copies.
    expect(await live()).not.toContainEqual([failed.providerId, failed.dataSetId, failed.pieceId])
    await until(
      async () => ((await client.removalState(failed)) === 'gone' ? true : undefined),
      'the piece removed at the next proving period',
    )
    const after = await rail(failed.dataSetId)
    expect(after.endEpoch).toBe(0n)
    expect(after.paymentRate).toBeLessThan(before.paymentRate)
  }, 120_000)
})
