import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, describe, expect, it } from 'vitest'
import { basicAuth, startPart, startStack, type RunningPart, type RunningStack } from '../../scripts/lib/stack.ts'
import { connectOnchainCloud } from '../../server/compose/onchain-cloud.ts'
import { ConfigError, loadConfig } from '../../server/shared/config.ts'

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
