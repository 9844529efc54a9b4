import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as Abis from '@filoz/synapse-core/abis'
import * as WarmStorage from '@filoz/synapse-core/warm-storage'
import { createPublicClient, http, parseEther, parseUnits } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { focChainOn, focClientOn } from '../../simulation/simfoc/sdk-chain.ts'
import type { FocClient } from '../../../server/network/foc/client.ts'
import { startSimulatedFoc, type SimulatedFoc } from '../../../server/simulation/simfoc/index.ts'

const USDFC = (n: string) => parseUnits(n, 18)
/** FWSS 1.3.1 PriceListUSDFC.sol: the reserve, and the fees a data set's first add takes from it. */
const RESERVE = USDFC('0.1')
const CREATE_AND_ADD_ONE_FEES = USDFC('0.025') + USDFC('0.0005') + USDFC('0.0003')
const ADD_ONE_FEES = USDFC('0.0005') + USDFC('0.0003')

const bytes = (size: number, salt: number) => new Uint8Array(size).map((_, i) => (i * 7919 + salt * 104729) % 251)

/**
 * Funding that holds on the GA contracts: a fresh account funded to exactly the client's estimate
 * stores 1, 2 and 3 copies with no revert (SDK 0.41's estimate leaves a second new data set short
 * of lockup: InsufficientLockupFunds), and so does the same account once it has data sets; the
 * data sets read back with GA's 13 fields.
 */
describe("the gateway's Onchain Cloud client funds and stores copies as GA charges them", () => {
  let dir: string
  let foc: SimulatedFoc
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'foc-ga-'))
    // 10 epochs a second: the client's margin of a day of the account's rate outlasts any store here.
    foc = await startSimulatedFoc({ dir, seed: 'ga funding', genesisTimestamp: Date.now() / 1000, epochSeconds: 0.1, providerCount: 3 })
  }, 180_000)
  afterAll(async () => {
    await foc?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  const freshClient = async (): Promise<FocClient> => {
    const account = privateKeyToAccount(generatePrivateKey())
    await foc.faucet(account.address, { fil: parseEther('10'), usdfc: USDFC('100') })
    return focClientOn(foc, account)
  }

  /**
   * Funds the account to exactly what the client says, then stores: every copy made, no failure. (Once
   * the account pays a rate, what is available shrinks every epoch, so "ready" is asked only of a fresh one.)
   */
  const fundAndStore = async (client: FocClient, data: Uint8Array, copies: number) => {
    const funding = await client.funding(data.length, { copies })
    if (funding.depositNeeded > 0n) await client.fund(funding.depositNeeded)
    if (funding.newDataSets === copies) expect((await client.funding(data.length, { copies })).ready).toBe(true)
    const stored = await client.store(data, { copies })
    expect(stored.failures).toEqual([])
    expect(stored.copies).toHaveLength(copies)
    return { funding, stored }
  }

  for (const copies of [1, 2, 3]) {
    it(`stores ${copies} cop${copies === 1 ? 'y' : 'ies'} funded to exactly the estimate, on a fresh account and then on its data sets`, async () => {
      const client = await freshClient()
      const first = await client.funding(200_000, { copies })
      expect(first).toMatchObject({ ready: false, needsApproval: true, newDataSets: copies })
      // Each new data set: at least the reserve and 30 days of the data set fee (0.024 USDFC a month), added, not a floor.
      expect(first.depositNeeded).toBeGreaterThan(BigInt(copies) * (RESERVE + USDFC('0.024')))

      const { stored } = await fundAndStore(client, bytes(200_000, copies), copies)
      // The first copy is on a provider the service endorsed (two of the three are).
      const primary = foc.providers.find((p) => Number(p.providerId) === stored.copies[0].providerId)!
      expect(primary.endorsed).toBe(true)

      // The same account again: the copies go into its data sets, each paying only the add fee and the added rate.
      const again = await client.funding(100_000, { copies })
      expect(again.newDataSets).toBe(0)
      const second = await fundAndStore(client, bytes(100_000, 10 + copies), copies)
      expect(second.stored.copies.map((c) => c.dataSetId).sort()).toEqual(stored.copies.map((c) => c.dataSetId).sort())

      // The data sets as GA's view has them: 13 fields, the reserve less the fees of a creation and two adds.
      const sets = await client.clientDataSets()
      expect(sets).toHaveLength(copies)
      for (const set of sets) {
        expect(set).toMatchObject({
          payer: client.address,
          live: true,
          managed: true,
          pdpEndEpoch: 0n,
          activePieceCount: 2n,
          pendingFees: 0n,
        })
        expect(set.lifecycleReserve).toBe(RESERVE - CREATE_AND_ADD_ONE_FEES - ADD_ONE_FEES)
        expect(stored.copies.map((c) => c.dataSetId)).toContain(set.dataSetId)
      }
    }, 240_000)
  }

  it("reads the payer's data sets whole where SDK 0.41's own ABI (11 fields) reads the second one wrong", async () => {
    const client = await freshClient()
    await fundAndStore(client, bytes(50_000, 99), 2)
    const ours = await client.clientDataSets()
    expect(new Set(ours.map((d) => d.providerId)).size).toBe(2)

    // The SDK's shipped view ABI: the first entry decodes, the second is shifted by two words.
    const plain = createPublicClient({ transport: http(foc.rpcUrl) })
    const sdkRead = await plain.readContract({
      address: foc.contracts.fwssView,
      abi: Abis.fwssView,
      functionName: 'getClientDataSets',
      args: [client.address, 0n, 10n],
    })
    expect(sdkRead[0].dataSetId).not.toBe(ours[0].dataSetId) // 11 fields: its "dataSetId" is GA's pendingOneTimePayments
    expect(sdkRead[1].payer).not.toBe(client.address)
    // The chain the client hands the SDK carries GA's view ABI, so the SDK's own reads inside store decode it too.
    const viaSdk = await WarmStorage.getClientDataSets(createPublicClient({ chain: focChainOn(foc), transport: http(foc.rpcUrl) }), {
      address: client.address,
    })
    expect(viaSdk.map((d) => [d.dataSetId, d.providerId, d.payer])).toEqual(ours.map((d) => [d.dataSetId, BigInt(d.providerId), d.payer]))
  }, 240_000)
})
