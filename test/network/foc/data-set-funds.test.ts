import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseEther, parseUnits } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { focClientOn } from '../../simulation/simfoc/sdk-chain.ts'
import { FocFundsError, type FocClient } from '../../../server/network/foc/client.ts'
import { startSimulatedFoc, type SimulatedFoc } from '../../../server/simulation/simfoc/index.ts'

/**
 * A new data set the warm storage service refuses because the account's available funds are below
 * what creating one needs (FWSS 1.3.1 Rails.sol, InsufficientLockupFunds): the provider answers only
 * "chain: execution reverted", as Curio does, and the client says it as the funds problem it is.
 */
describe('a data set creation refused for want of funds', () => {
  let dir: string
  let foc: SimulatedFoc
  let client: FocClient
  const account = privateKeyToAccount(generatePrivateKey())
  const data = (seed: number) => new Uint8Array(200_000).map((_, i) => (i * 7919 + seed) % 251)
  const metadata = { withIPFSIndexing: '' }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'foc-data-set-funds-'))
    foc = await startSimulatedFoc({
      dir,
      seed: 'data set funds',
      genesisTimestamp: Date.now() / 1000 - 600,
      epochSeconds: 0.05,
      providerCount: 3,
      endorsed: 3,
      proving: 'wide-window',
    })
    await foc.faucet(account.address, { fil: parseEther('10'), usdfc: parseUnits('100', 18) })
    client = await focClientOn(foc, account)
  }, 180_000)
  afterAll(async () => {
    await foc?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('says which rule refused it, what is available and what to deposit, rather than "no reason given"', async () => {
    // Funds for two data sets, as the gateway deposits for its first two copies.
    await client.fund((await client.funding(data(1).length, { copies: 2, metadata })).depositNeeded)
    const first = await client.store(data(1), { copies: 2, metadata })
    const used = first.copies.map((c) => c.providerId)
    expect(used).toHaveLength(2)

    // A copy on the third provider needs a data set of its own there, which the funds left do not cover.
    const refused = await client.store(data(2), { copies: 1, excludeProviderIds: used, metadata }).catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(FocFundsError)
    const message = (refused as Error).message
    expect(message).toMatch(/InsufficientLockupFunds/)
    expect(message).toMatch(/needs 0\.124 USDFC available in Filecoin Pay/)
    expect(message).toMatch(/deposit at least [\d.]+ USDFC more/)
    expect(message).not.toMatch(/no reason given/)
  }, 300_000)
})
