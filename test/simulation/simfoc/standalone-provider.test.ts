import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as SP from '@filoz/synapse-core/sp'
import { createPublicClient, http, parseAbi, parseEther, parseUnits, type Hex } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, describe, expect, it } from 'vitest'
import { focChainOn, focClientOn } from './sdk-chain.ts'
import { approveOnSimulatedFoc, startSimulatedFoc } from '../../../server/simulation/simfoc/index.ts'
import { ProviderNotFunded, runStandaloneProvider } from '../../../server/simulation/simfoc/standalone-provider.ts'

const view = parseAbi(['function isProviderApproved(uint256 providerId) view returns (bool)'])

/**
 * `npm run simfoc -- provider`: a simulated Curio provider that knows a
 * chain only by its RPC URL and contract addresses, as it would run against
 * FilOzone's devnet, here the simulated Onchain Cloud of another process's
 * making: it registers itself, is approved by the service's owner, and takes
 * a copy the gateway's client stores.
 */
describe('a simulated PDP provider run on its own against a devnet', () => {
  const dir = mkdtempSync(join(tmpdir(), 'simfoc-standalone-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('asks for FIL first, then registers itself, and once approved takes a copy on that chain', async () => {
    const seed = 'standalone'
    const foc = await startSimulatedFoc({
      dir: join(dir, 'devnet'),
      seed,
      genesisTimestamp: Date.now() / 1000,
      epochSeconds: 0.05,
      providerCount: 1,
      proving: 'wide-window',
    })
    const providerDir = join(dir, 'provider')
    try {
      const options = { rpcUrl: foc.rpcUrl, fwss: foc.contracts.fwss, dir: providerDir }
      // Unfunded: it says which address to fund and with how much, and registers nothing.
      const refused = await runStandaloneProvider(options).catch((err: unknown) => err)
      expect(refused).toBeInstanceOf(ProviderNotFunded)
      const address = privateKeyToAccount(readFileSync(join(providerDir, 'key'), 'utf8').trim() as Hex).address
      expect((refused as Error).message).toContain(`the provider's address ${address} holds 0 FIL on the devnet`)

      await foc.faucet(address, { fil: parseEther('10') })
      const standalone = await runStandaloneProvider(options)
      try {
        expect(standalone.address).toBe(address)
        expect(standalone.providerId).toBeGreaterThan(foc.providers[0].providerId)
        await SP.ping(standalone.url)
        const chain = focChainOn(foc)
        const reader = createPublicClient({ chain, transport: http(foc.rpcUrl) })
        const approved = () =>
          reader.readContract({
            address: foc.contracts.fwssView,
            abi: view,
            functionName: 'isProviderApproved',
            args: [standalone.providerId],
          })
        expect(await approved()).toBe(false)
        await approveOnSimulatedFoc({
          rpcUrl: foc.rpcUrl,
          seed,
          contracts: foc.contracts,
          providerId: standalone.providerId,
          endorse: true,
        })
        expect(await approved()).toBe(true)

        // A client of that chain, told to leave the devnet's own provider out, stores its copy there.
        const account = privateKeyToAccount(generatePrivateKey())
        await foc.faucet(account.address, { fil: parseEther('10'), usdfc: parseUnits('100', 18) })
        const client = await focClientOn(foc, account)
        const bytes = new Uint8Array(50_000).map((_, i) => (i * 13) % 251)
        await client.fund((await client.funding(bytes.length, { copies: 1 })).depositNeeded + parseUnits('1', 18))
        const stored = await client.store(bytes, { copies: 1, excludeProviderIds: [Number(foc.providers[0].providerId)] })
        expect(stored.copies.map((c) => c.providerId)).toEqual([Number(standalone.providerId)])
        expect(standalone.provider.dataSets()).toHaveLength(1)
      } finally {
        await standalone.close()
      }
    } finally {
      await foc.close()
    }
  }, 180_000)

  it('npm run simfoc: --help, and a provider without its chain or with a file that names none is refused', () => {
    const run = (...args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', 'scripts/simfoc.ts', ...args], { encoding: 'utf8' })
    const help = run('--help')
    expect(help.status).toBe(0)
    expect(help.stdout).toMatch(/provider --rpc URL --contracts FILE/)
    const bare = run('provider')
    expect(bare.status).toBe(2)
    expect(bare.stderr).toMatch(/provider needs --rpc URL and --contracts FILE/)
    const file = join(dir, 'not-contracts.json')
    writeFileSync(file, '{"pdp": "0x1"}')
    const bad = run('provider', '--rpc', 'http://127.0.0.1:9/rpc/v1', '--contracts', file)
    expect(bad.status).toBe(2)
    expect(bad.stderr).toMatch(/--contracts .*not-contracts.json: names no warm storage service/)
    expect(run('approve', 'x').stderr).toMatch(/approve needs a provider ID/)
  }, 60_000)
})
