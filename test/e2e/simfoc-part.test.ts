import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { getPDPProviders } from '@filoz/synapse-core/sp-registry'
import * as SP from '@filoz/synapse-core/sp'
import { createPublicClient, erc20Abi, http } from 'viem'
import { afterAll, describe, expect, it } from 'vitest'
import { startPart } from '../../scripts/lib/stack.ts'
import { connectOnchainCloud } from '../../server/compose/onchain-cloud.ts'
import { loadConfig } from '../../server/shared/config.ts'
import { openKeystore } from '../../server/network/wallet/keystore.ts'

/** The URL a log line with this message carries. */
const urlOf = (output: string, msg: string) => new RegExp(`"url":"(http:[^"]+)"[^\\n]*${msg}`).exec(output)?.[1]

describe('the deal service part runs the simulated Onchain Cloud beside the simulated network', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'simfoc-part-'))
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

  it('serves FEVM RPC with the FOC contracts and registered PDP providers, funds the wallet once, and comes back the same after a restart', async () => {
    // The wallet key npm start makes at the first start, before the parts.
    const keystore = openKeystore(join(dataDir, 'wallet'), 'mainnet')
    const wallet = keystore.create()
    const env = { DATA_DIR: dataDir, SERVICE_PORT: '0', SIMNET_RPC_PORT: '0', SIMFOC_RPC_PORT: '0', SIMFOC_PROVIDERS: '2' }
    const look = async () => {
      const service = await startPart('service', env)
      try {
        const rpcUrl = urlOf(service.output(), 'simulated Onchain Cloud')!
        // Found as the wallet command and the gateway find it: the RPC, and DATA_DIR/simfoc/contracts.json's FWSS proxy.
        const { chain } = await connectOnchainCloud(loadConfig({ DATA_DIR: dataDir, SIMFOC_RPC_URL: rpcUrl }), keystore.evmAccount())
        const contracts = chain.contracts
        const client = createPublicClient({ chain, transport: http(rpcUrl) })
        const providers = await getPDPProviders(client, {})
        // Each registered service URL answers Curio's ping.
        for (const p of providers.providers) await SP.ping(p.pdp.serviceURL)
        return {
          chainId: await client.getChainId(),
          contracts: Object.fromEntries(Object.entries(contracts).map(([k, c]) => [k, c.address])),
          providers: providers.providers.map((p) => ({ id: p.id, serviceURL: p.pdp.serviceURL })),
          usdfc: await client.readContract({
            address: contracts.usdfc.address,
            abi: erc20Abi,
            functionName: 'balanceOf',
            args: [wallet.ethAddress],
          }),
          fil: await client.getBalance({ address: wallet.ethAddress }),
        }
      } finally {
        expect(await service.stop()).toBe(0)
      }
    }
    const first = await look()
    expect(first.chainId).toBe(31_415_926)
    expect(first.providers).toHaveLength(2)
    expect(first.usdfc).toBe(1_000n * 10n ** 18n)
    expect(first.fil).toBe(100n * 10n ** 18n)
    // Restarted on another RPC port: the same chain, contracts and providers (at the URLs they registered), no second faucet.
    expect(await look()).toEqual(first)
  }, 120_000)

  it("npm run wallet -- foc and deposit: the account's USDFC, a deposit into Filecoin Pay through the SDK, a deposit it cannot pay refused", async () => {
    const service = await startPart('service', {
      DATA_DIR: dataDir,
      SERVICE_PORT: '0',
      SIMNET_RPC_PORT: '0',
      SIMFOC_RPC_PORT: '0',
      SIMFOC_PROVIDERS: '2',
    })
    const wallet = (...args: string[]) =>
      new Promise<{ status: number | null; out: string }>((resolve) => {
        const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/wallet.ts', ...args], {
          env: { ...process.env, DATA_DIR: dataDir, SIMFOC_RPC_URL: urlOf(service.output(), 'simulated Onchain Cloud')! },
        })
        let out = ''
        child.stdout.on('data', (c: Buffer) => (out += c))
        child.stderr.on('data', (c: Buffer) => (out += c))
        child.on('exit', (status) => resolve({ status, out }))
      })
    try {
      const before = await wallet('foc')
      expect(before.status).toBe(0)
      expect(before.out).toMatch(/wallet: +100 FIL, 1000 USDFC/)
      expect(before.out).toMatch(/funded until: +nothing stored yet/)
      const deposited = await wallet('deposit', '10', 'USDFC')
      expect(deposited.status).toBe(0)
      expect(deposited.out).toMatch(/Deposited 10 USDFC into Filecoin Pay: transaction 0x[0-9a-f]{64}/)
      expect(deposited.out).toMatch(/Filecoin Pay: +10 USDFC deposited/)
      const again = await wallet('deposit', '2.5', 'USDFC', '--json')
      expect(again.status).toBe(0)
      expect(JSON.parse(again.out.slice(again.out.indexOf('\n{') + 1)).funds).toBe((125n * 10n ** 17n).toString())
      const tooMuch = await wallet('deposit', '5000', 'USDFC')
      expect(tooMuch.status).toBe(2)
      expect(tooMuch.out).toMatch(/holds 987.5 USDFC; 5000 USDFC is to be deposited/)
      expect((await wallet('deposit', '10')).out).toMatch(/deposit takes an amount of USDFC/)
    } finally {
      expect(await service.stop()).toBe(0)
    }
  }, 120_000)
})
