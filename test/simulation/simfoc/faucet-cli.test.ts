import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import * as Abis from '@filoz/synapse-core/abis'
import { createPublicClient, erc20Abi, hexToBytes, http, keccak256, toHex, type Address } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { delegatedAddress, formatAddress } from '../../../server/shared/address.ts'
import { startSimulatedFoc, type SimulatedFoc } from '../../../server/simulation/simfoc/index.ts'

// `npm run simfoc -- fund` and `migrate`, run as a user runs them: a child process that finds the
// simulated Onchain Cloud of a running stack from DATA_DIR, SIMFOC_RPC_URL and SIMNET_SEED.
const ROOT = resolve(import.meta.dirname, '../../..')
const SEED = 'faucet cli'
const FIL = 10n ** 18n

describe('npm run simfoc -- fund and migrate', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'simfoc-faucet-'))
  const emptyDir = mkdtempSync(join(tmpdir(), 'simfoc-faucet-none-'))
  let foc: SimulatedFoc
  let env: Record<string, string>
  beforeAll(async () => {
    foc = await startSimulatedFoc({
      dir: join(dataDir, 'simfoc'),
      seed: SEED,
      genesisTimestamp: Date.now() / 1000,
      epochSeconds: 0.05,
      providerCount: 0,
    })
    env = { DATA_DIR: dataDir, SIMFOC_RPC_URL: foc.rpcUrl, SIMNET_SEED: SEED }
  }, 120_000)
  afterAll(async () => {
    await foc?.close()
    rmSync(dataDir, { recursive: true, force: true })
    rmSync(emptyDir, { recursive: true, force: true })
  })

  const simfoc = (args: string[], extra: Record<string, string> = {}) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((done) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/simfoc.ts', ...args], {
        cwd: ROOT,
        env: { ...process.env, LOG_LEVEL: 'warn', ...env, ...extra },
      })
      let stdout = ''
      let stderr = ''
      child.stdout.on('data', (c: Buffer) => (stdout += c))
      child.stderr.on('data', (c: Buffer) => (stderr += c))
      child.on('exit', (status) => done({ status, stdout, stderr }))
    })
  const balances = async (address: Address) => {
    const client = createPublicClient({ transport: http(foc.rpcUrl) })
    return {
      fil: await client.getBalance({ address }),
      usdfc: await client.readContract({ address: foc.contracts.usdfc, abi: erc20Abi, functionName: 'balanceOf', args: [address] }),
    }
  }

  it('sends FIL and mints USDFC to a fresh key, given as 0x… or as t410f…, by transactions of the deployer', async () => {
    const address = privateKeyToAccount(generatePrivateKey()).address
    const deployer = privateKeyToAccount(keccak256(toHex(`simulated FOC ${SEED}: deployer`))).address
    const nonceBefore = await createPublicClient({ transport: http(foc.rpcUrl) }).getTransactionCount({ address: deployer })
    const first = await simfoc(['fund', address, '12.5', '300'])
    expect(first).toMatchObject({ status: 0, stdout: expect.stringContaining(`Sent 12.5 FIL and minted 300 USDFC to ${address}`) })
    expect(await balances(address)).toEqual({ fil: 12n * FIL + FIL / 2n, usdfc: 300n * FIL })

    const t410f = delegatedAddress('testnet', hexToBytes(address))
    expect(await simfoc(['fund', t410f, '1', '0.25'])).toMatchObject({ status: 0 })
    expect(await balances(address)).toEqual({ fil: 13n * FIL + FIL / 2n, usdfc: 300n * FIL + FIL / 4n })

    // Real transactions: the deployer minted the USDFC and sent the FIL, and its nonce counts them.
    const client = createPublicClient({ transport: http(foc.rpcUrl) })
    const logs = await client.getContractEvents({
      address: foc.contracts.usdfc,
      abi: erc20Abi,
      eventName: 'Transfer',
      args: { to: address },
      fromBlock: 0n,
    })
    expect(logs.map((l) => l.args.value)).toEqual([300n * FIL, FIL / 4n])
    expect(await client.getTransactionCount({ address: deployer })).toBe(nonceBefore + 4)
  }, 60_000)

  it('refuses a bad address, a bad amount, and a stack that is not there, saying which', async () => {
    const address = privateKeyToAccount(generatePrivateKey()).address
    const [badAddress, notFevm, badAmount, tooFine, nothing, noNode, noStack, otherSeed] = await Promise.all([
      simfoc(['fund', '0x12', '1', '1']),
      simfoc(['fund', formatAddress('mainnet', 1, new Uint8Array(20).fill(7)), '1', '1']),
      simfoc(['fund', address, 'lots', '1']),
      simfoc(['fund', address, '1', '0.0000000000000000001']),
      simfoc(['fund', address]),
      simfoc(['fund', address, '1', '1'], { SIMFOC_RPC_URL: 'http://127.0.0.1:9/rpc/v1' }),
      simfoc(['fund', address, '1', '1'], { DATA_DIR: emptyDir }),
      simfoc(['fund', address, '1', '1'], { SIMNET_SEED: 'another seed' }),
    ])
    expect(badAddress).toMatchObject({ status: 2, stderr: expect.stringMatching(/^0x12 is not an address/) })
    expect(notFevm).toMatchObject({ status: 2, stderr: expect.stringContaining('is not an FEVM account') })
    expect(badAmount).toMatchObject({ status: 2, stderr: expect.stringMatching(/^lots is not an amount of FIL/) })
    expect(tooFine).toMatchObject({ status: 2, stderr: expect.stringContaining('is not an amount of USDFC') })
    expect(nothing).toMatchObject({ status: 2, stderr: expect.stringContaining('fund needs ADDRESS FIL USDFC') })
    expect(noNode).toMatchObject({ status: 2, stderr: expect.stringContaining('does not answer at http://127.0.0.1:9/rpc/v1') })
    expect(noStack).toMatchObject({
      status: 2,
      stderr: expect.stringContaining(`no simulated Onchain Cloud in ${join(emptyDir, 'simfoc')}`),
    })
    expect(otherSeed).toMatchObject({ status: 2, stderr: expect.stringContaining('another seed than this SIMNET_SEED') })
    for (const r of [badAddress, badAmount, noNode, noStack, otherSeed]) expect(r.stderr).not.toMatch(/simfoc failed|\n\s+at /)
    expect(await balances(address)).toEqual({ fil: 0n, usdfc: 0n })
  }, 120_000)

  it('migrates the running service to a new view and says where', async () => {
    const before = foc.contracts.fwssView
    const { status, stdout } = await simfoc(['migrate'])
    expect(status).toBe(0)
    const view = /now points at the view (0x[0-9a-fA-F]{40})/.exec(stdout)?.[1]
    const client = createPublicClient({ transport: http(foc.rpcUrl) })
    const now = await client.readContract({ address: foc.contracts.fwss, abi: Abis.fwss, functionName: 'viewContractAddress' })
    expect(view).toBe(now)
    expect(now).not.toBe(before)
  }, 60_000)

  it('says fund and migrate in --help', async () => {
    const { status, stdout } = await simfoc(['--help'])
    expect(status).toBe(0)
    expect(stdout).toMatch(/fund ADDRESS FIL USDFC/)
    expect(stdout).toMatch(/migrate\n/)
  }, 30_000)
})
