import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { createPublicClient, http, parseEther, parseUnits } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, describe, expect, it } from 'vitest'
import { basicAuth, startPart, startStack, type RunningPart, type RunningStack } from '../../scripts/lib/stack.ts'
import { connectOnchainCloud } from '../../server/compose/onchain-cloud.ts'
import { ConfigError, loadConfig } from '../../server/shared/config.ts'
import { openKeystore } from '../../server/network/wallet/keystore.ts'
import { startSimulatedFoc, type SimulatedFoc } from '../../server/simulation/simfoc/index.ts'

const PASSWORD = 'foc-devnet-password'
const ROOT = resolve(import.meta.dirname, '../..')

/** `npm run <name> -- …args` as a user runs it, in the repository, with `env` over the test's own. */
const script = (name: string, args: string[], env: Record<string, string>) =>
  promisify(execFile)(process.execPath, ['--import', 'tsx', `scripts/${name}.ts`, ...args], { cwd: ROOT, env: { ...process.env, ...env } })
const urlOf = (output: string, msg: string) => new RegExp(`"url":"(http:[^"]+)"[^\\n]*${msg}`).exec(output)?.[1]

/**
 * The Onchain Cloud devnet mode (NETWORK=devnet, FOC_RPC_URL, FOC_CONTRACTS):
 * one deal service part runs the simulated network and Onchain Cloud, which
 * stand in for someone else's devnet; a second stack, in its own DATA_DIR,
 * knows them only by their RPC URLs and the addresses file the simulated
 * Onchain Cloud writes, as it would know FilOzone's foc-devnet.
 */
describe("a gateway on someone else's Onchain Cloud devnet", () => {
  const devnetDir = mkdtempSync(join(tmpdir(), 'foc-devnet-'))
  const gatewayDir = mkdtempSync(join(tmpdir(), 'foc-devnet-gw-'))
  let devnet: RunningPart | undefined
  let stack: RunningStack | undefined
  afterAll(async () => {
    if (stack?.child.exitCode === null) await stack.stop()
    await devnet?.stop()
    rmSync(devnetDir, { recursive: true, force: true })
    rmSync(gatewayDir, { recursive: true, force: true })
  })

  it('stores a file as a proved PDP copy there, the chain and contracts found from FOC_RPC_URL and FOC_CONTRACTS alone', async () => {
    devnet = await startPart('service', {
      DATA_DIR: devnetDir,
      SERVICE_PORT: '0',
      SIMNET_RPC_PORT: '0',
      SIMFOC_RPC_PORT: '0',
      SIMFOC_PROVIDERS: '2',
    })
    const lotusUrl = urlOf(devnet.output(), 'simulated network')!
    const focUrl = urlOf(devnet.output(), 'simulated Onchain Cloud')!
    // As the README says: the second gateway makes its own key, and the devnet stack's faucet funds it.
    const key = JSON.parse((await script('wallet', ['new', '--json'], { DATA_DIR: gatewayDir })).stdout) as { ethAddress: string }
    const funded = await script('simfoc', ['fund', key.ethAddress, '100', '1000'], { DATA_DIR: devnetDir, SIMFOC_RPC_URL: focUrl })
    expect(funded.stdout).toContain(`Sent 100 FIL and minted 1000 USDFC to ${key.ethAddress}`)
    const contractsFile = join(devnetDir, 'simfoc', 'contracts.json')
    const env = { NETWORK: 'devnet', LOTUS_URL: lotusUrl, FOC_RPC_URL: focUrl, FOC_CONTRACTS: contractsFile }

    // The same addresses in FilOzone foc-devnet's devnet-info.json shape name the same chain.
    const own = JSON.parse(readFileSync(contractsFile, 'utf8'))
    const infoFile = join(gatewayDir, 'devnet-info.json')
    writeFileSync(infoFile, JSON.stringify(fromOwnFile(own)))
    // Every other address is read from the warm storage service on chain, the same from either file.
    const reader = privateKeyToAccount(generatePrivateKey())
    const byInfo = await connectOnchainCloud(loadConfig({ ...env, DATA_DIR: gatewayDir, FOC_CONTRACTS: infoFile }), reader)
    const byOwn = await connectOnchainCloud(loadConfig({ ...env, DATA_DIR: gatewayDir }), reader)
    expect(byInfo.deployment()).toEqual(byOwn.deployment())
    expect(own).toMatchObject(byOwn.deployment().contracts)
    expect(byOwn.deployment().versions.fwss).toMatch(/^1\.3\./)
    // A file that is not one, and a node that does not answer, say so at start.
    writeFileSync(infoFile, JSON.stringify({ fwss: '0x12' }))
    await expect(connectOnchainCloud(loadConfig({ ...env, FOC_CONTRACTS: infoFile }), reader)).rejects.toThrow(
      /FOC_CONTRACTS: .*devnet-info.json cannot be read as the devnet's contract addresses: not a file of contract addresses \(fwss: /,
    )
    await expect(connectOnchainCloud(loadConfig({ ...env, FOC_RPC_URL: 'http://127.0.0.1:9/rpc/v1' }), reader)).rejects.toThrow(ConfigError)

    stack = await startStack({
      ...env,
      DATA_DIR: gatewayDir,
      ADMIN_PASSWORD: PASSWORD,
      GROUP_IDLE_SECONDS: '1',
      DEAL_COPIES: '0',
      PDP_COPIES: '1',
      FOC_AUTO_DEPOSIT: 'true',
    })
    const s = stack
    const auth = basicAuth('admin', PASSWORD)
    const put = await fetch(`${s.appUrl}/remote.php/dav/files/admin/devnet.txt`, {
      method: 'PUT',
      headers: { authorization: auth },
      body: 'on a devnet',
    })
    expect(put.status).toBe(201)
    const group = async () => {
      const res = await fetch(`${s.appUrl}/ocs/v2.php/apps/gateway/get-file-metadata`, {
        method: 'POST',
        headers: { authorization: auth, 'ocs-apirequest': 'true', 'content-type': 'application/json' },
        body: JSON.stringify({ filePath: '/devnet.txt' }),
      })
      return ((await res.json()) as any).metadata?.file?.details?.groups?.[0]
    }
    let proved: any[] = []
    for (const started = Date.now(); Date.now() - started < 240_000; await new Promise((r) => setTimeout(r, 1000))) {
      proved = ((await group())?.deals ?? []).filter((d: any) => d.route === 'pdp' && d.state === 'active')
      if (proved.length === 1) break
    }
    expect(proved).toHaveLength(1)
    // On the devnet's providers, as its registry names them.
    expect(proved[0].provider).toMatch(/^pdp:\d+$/)
    expect(s.output()).not.toMatch(/simulated Onchain Cloud: FEVM chain serving/)
    expect(await s.stop()).toBe(0)
  }, 420_000)
})

/**
 * The Onchain Cloud alone (DEAL_COPIES=0) on a devnet that is nothing but an
 * FEVM chain: NETWORK=devnet with FOC_RPC_URL and FOC_CONTRACTS, no LOTUS_URL
 * and no deal service. The chain is a simulated Onchain Cloud on its own
 * clock (its genesis an hour ago, 20 epochs a second), which no Lotus node
 * shares: every PDP date the gateway and the app give is that chain's.
 */
describe('a gateway on an FEVM-only Onchain Cloud devnet, the deal market off', () => {
  const focDir = mkdtempSync(join(tmpdir(), 'fevm-devnet-'))
  const gatewayDir = mkdtempSync(join(tmpdir(), 'fevm-devnet-gw-'))
  let foc: SimulatedFoc | undefined
  let stack: RunningStack | undefined
  afterAll(async () => {
    if (stack?.child.exitCode === null) await stack.stop()
    await foc?.close()
    rmSync(focDir, { recursive: true, force: true })
    rmSync(gatewayDir, { recursive: true, force: true })
  })

  it("stores a file as a proved PDP copy with no Lotus node, its dates the FEVM chain's block times", async () => {
    const genesis = Math.floor(Date.now() / 1000) - 3600
    const epochSeconds = 0.05
    foc = await startSimulatedFoc({
      dir: focDir,
      seed: 'fevm only',
      genesisTimestamp: genesis,
      epochSeconds,
      providerCount: 2,
      proving: 'wide-window',
    })
    // The devnet's faucet funds the gateway's own key.
    const keystore = openKeystore(join(gatewayDir, 'wallet'), 'testnet')
    keystore.create()
    await foc.faucet(keystore.list()[0].ethAddress, { fil: parseEther('10'), usdfc: parseUnits('100', 18) })
    const env = { NETWORK: 'devnet', FOC_RPC_URL: foc.rpcUrl, FOC_CONTRACTS: join(focDir, 'contracts.json'), DEAL_COPIES: '0' }
    // The deal market still needs its node: only DEAL_COPIES=0 leaves LOTUS_URL out.
    expect(() => loadConfig({ ...env, DEAL_COPIES: undefined })).toThrow(
      /LOTUS_URL: required when NETWORK=devnet and deals are made on the market/,
    )

    stack = await startStack({
      ...env,
      DATA_DIR: gatewayDir,
      ADMIN_PASSWORD: PASSWORD,
      GROUP_IDLE_SECONDS: '1',
      PDP_COPIES: '1',
      FOC_AUTO_DEPOSIT: 'true',
    })
    const s = stack
    const auth = basicAuth('admin', PASSWORD)
    const put = await fetch(`${s.appUrl}/remote.php/dav/files/admin/fevm.txt`, {
      method: 'PUT',
      headers: { authorization: auth },
      body: 'on an FEVM chain',
    })
    expect(put.status).toBe(201)
    const metadata = async () => {
      const res = await fetch(`${s.appUrl}/ocs/v2.php/apps/gateway/get-file-metadata`, {
        method: 'POST',
        headers: { authorization: auth, 'ocs-apirequest': 'true', 'content-type': 'application/json' },
        body: JSON.stringify({ filePath: '/fevm.txt' }),
      })
      return ((await res.json()) as any).metadata?.file?.details
    }
    let details: any
    for (const started = Date.now(); Date.now() - started < 240_000; await new Promise((r) => setTimeout(r, 1000))) {
      details = await metadata()
      const copy = details?.groups?.[0]?.deals?.find((d: any) => d.route === 'pdp' && d.state === 'active')
      if (copy?.isRetrievable && details.expirationTimestamp !== undefined) break
    }
    const [copy] = details.groups[0].deals.filter((d: any) => d.route === 'pdp' && d.state === 'active')
    expect(copy).toMatchObject({ provider: expect.stringMatching(/^pdp:\d+$/), milestone: 'proved', isRetrievable: true })

    // The dates are the FEVM chain's: its proof's block was stamped then, and its end is where that chain's clock puts it.
    // Blocks are stamped to the whole second, so the gateway read a 20-epochs-a-second clock from block 0 and a head at
    // least an hour (72 000 epochs) later to within a second over that span: an epoch n epochs on, to 1 + n / 72 000 s.
    const chain = createPublicClient({ transport: http(foc.rpcUrl) })
    const proofBlock = await chain.getBlock({ blockNumber: BigInt(copy.lastProofEpoch) })
    expect(Math.abs(copy.lastProofTimestamp - Number(proofBlock.timestamp))).toBeLessThanOrEqual(1 + copy.lastProofEpoch / 72_000)
    expect(Math.abs(copy.endTimestamp - Math.floor(genesis + copy.endEpoch * epochSeconds))).toBeLessThanOrEqual(1 + copy.endEpoch / 72_000)
    expect(details).toMatchObject({ expirationEpoch: copy.endEpoch, expirationTimestamp: copy.endTimestamp })
    // The gateway's own record says the same: the app passes its dates through.
    const gatewayPassword = readFileSync(join(gatewayDir, 'gateway-password'), 'utf8').trim()
    const record = await fetch(`${s.gatewayUrl}/file-info`, {
      method: 'POST',
      headers: { authorization: basicAuth('bridge', gatewayPassword), 'content-type': 'application/json' },
      body: JSON.stringify({ filePath: '/admin/fevm.txt', verbose: true }),
    })
    const gatewayCopy = ((await record.json()) as any).result.file.details.groups[0].deals.find((d: any) => d.provider === copy.provider)
    expect(gatewayCopy).toMatchObject({ lastProofTimestamp: copy.lastProofTimestamp, endTimestamp: copy.endTimestamp })

    // Two parts only, the Onchain Cloud the one route, said at start; no Lotus node, deal service or simulated network.
    expect(s.serviceUrl).toBeUndefined()
    expect(s.output()).toMatch(
      /Storage routes: +Filecoin Onchain Cloud, a PDP copy a group \(FEVM at 127\.0\.0\.1:\d+\); the deal market is off \(DEAL_COPIES=0\)/,
    )
    expect(s.output()).toMatch(/"routes":\["pdp"\][^\n]*gateway listening/)
    expect(s.output()).not.toMatch(/simulated network|deal service listening/)
    // The admin's link test still reads the gateway's word: its network, and the Onchain Cloud alone in its plan.
    const status = (
      (await (
        await fetch(`${s.gatewayUrl}/status`, { method: 'POST', headers: { authorization: basicAuth('bridge', gatewayPassword) } })
      ).json()) as any
    ).result
    expect(status.network).toBe('devnet')
    expect(status.nextGroup.map((p: any) => [p.route, p.copies])).toEqual([
      ['market', 0],
      ['onchainCloud', 1],
    ])
    expect(await s.stop()).toBe(0)
  }, 420_000)
})

/** Our addresses file as foc-devnet exports them (synapse-core src/devnet/schema.ts names the keys). */
function fromOwnFile(c: Record<string, string>) {
  return {
    version: 2,
    info: {
      run_id: 'test',
      contracts: {
        multicall3_addr: c.multicall3,
        mockusdfc_addr: c.usdfc,
        filecoin_pay_v1_addr: c.filecoinPay,
        fwss_service_proxy_addr: c.fwss,
        fwss_state_view_addr: c.fwssView,
        service_provider_registry_proxy_addr: c.serviceProviderRegistry,
        session_key_registry_addr: c.sessionKeyRegistry,
        pdp_verifier_proxy_addr: c.pdp,
        endorsements_addr: c.endorsements,
      },
    },
  }
}
