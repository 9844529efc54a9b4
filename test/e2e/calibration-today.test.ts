/**
 * The Onchain Cloud route on calibration as it is deployed today (issue 44):
 * the simulated Onchain Cloud stands as calibration (SIMFOC_CHAIN=calibration:
 * chain id 314159, the FWSS proxy, endorsement set and Multicall3 at their
 * published addresses, FWSS migrated from the 1.2.0 view, which sits where
 * synapse-core 0.5.2 names calibration's view, to a GA view elsewhere), and a
 * gateway started with NETWORK=calibration and FOC_RPC_URL alone (no Lotus
 * node, no deal service, DEAL_COPIES=0) stores a file as a proved PDP copy,
 * follows a migration made while it runs, and refuses a chain that is not
 * the network's, or a view from before GA, with one line naming the setting.
 */
import { execFile, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { calibration } from '@filoz/synapse-core/chains'
import { createPublicClient, createWalletClient, http, keccak256, parseAbi, toHex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, describe, expect, it } from 'vitest'
import { basicAuth, startPart, startStack, type RunningPart, type RunningStack } from '../../scripts/lib/stack.ts'
import { PUBLISHED_ANCHORS } from '../../server/network/foc/published.ts'

const ROOT = resolve(import.meta.dirname, '../..')
const PASSWORD = 'calibration-today-password'
/** The simulated network's seed, SIMNET_SEED's default (server/shared/config.ts): its deployer owns the simulated FWSS. */
const SIMNET_DEFAULT_SEED = 'filecoin-simnet'
const script = (name: string, args: string[], env: Record<string, string>) =>
  promisify(execFile)(process.execPath, ['--import', 'tsx', `scripts/${name}.ts`, ...args], { cwd: ROOT, env: { ...process.env, ...env } })
const urlOf = (output: string, msg: string) => new RegExp(`"url":"(http:[^"]+)"[^\\n]*${msg}`).exec(output)?.[1]

/** A gateway started on its own that is expected to refuse to start: its exit code and what it said. */
function refusedStart(env: Record<string, string>): Promise<{ code: number | null; said: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts', '--role', 'gateway'], {
    cwd: ROOT,
    env: { ...process.env, TICKER_ENABLED: 'false', LOG_FORMAT: 'json', GATEWAY_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let said = ''
  child.stderr.on('data', (c: Buffer) => (said += c.toString()))
  const timer = setTimeout(() => child.kill('SIGTERM'), 60_000)
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer)
      resolve({ code, said })
    }),
  )
}

describe('a gateway on calibration as it is deployed today (the simulated Onchain Cloud standing as calibration)', () => {
  const netDir = mkdtempSync(join(tmpdir(), 'calibration-net-'))
  const gatewayDir = mkdtempSync(join(tmpdir(), 'calibration-gw-'))
  let network: RunningPart | undefined
  let stack: RunningStack | undefined
  afterAll(async () => {
    if (stack?.child.exitCode === null) await stack.stop()
    await network?.stop()
    rmSync(netDir, { recursive: true, force: true })
    rmSync(gatewayDir, { recursive: true, force: true })
  })

  it('stores a file as a proved PDP copy with NETWORK=calibration and FOC_RPC_URL alone, and follows a migration made meanwhile', async () => {
    network = await startPart('service', {
      DATA_DIR: netDir,
      SERVICE_PORT: '0',
      SIMNET_RPC_PORT: '0',
      SIMFOC_RPC_PORT: '0',
      SIMFOC_PROVIDERS: '2',
      SIMFOC_CHAIN: 'calibration',
    })
    const focUrl = urlOf(network.output(), 'simulated Onchain Cloud')!
    const chain = createPublicClient({ transport: http(focUrl) })
    // Calibration's history: FWSS where deployments.json has it, pointing at a GA view, while the view the SDK names is 1.2.0's.
    expect(await chain.getChainId()).toBe(314_159)
    const fwss = PUBLISHED_ANCHORS.calibration.fwss
    const viewOf = () =>
      chain.readContract({
        address: fwss,
        abi: parseAbi(['function viewContractAddress() view returns (address)']),
        functionName: 'viewContractAddress',
      })
    const sdkView = calibration.contracts.fwssView.address
    expect((await viewOf()).toLowerCase()).not.toBe(sdkView.toLowerCase())
    await expect(
      chain.readContract({
        address: sdkView,
        abi: parseAbi(['function getPriceList() view returns (uint256)']),
        functionName: 'getPriceList',
      }),
    ).rejects.toThrow(/revert/i)

    // The gateway's own key, funded by the simulation's faucet as calibration's faucets fund one.
    const env = { NETWORK: 'calibration', FOC_RPC_URL: focUrl, DEAL_COPIES: '0', DATA_DIR: gatewayDir }
    const key = JSON.parse((await script('wallet', ['new', '--json'], env)).stdout) as { ethAddress: string }
    await script('simfoc', ['fund', key.ethAddress, '100', '1000'], { DATA_DIR: netDir, SIMFOC_RPC_URL: focUrl })

    stack = await startStack({ ...env, ADMIN_PASSWORD: PASSWORD, GROUP_IDLE_SECONDS: '1', PDP_COPIES: '1', FOC_AUTO_DEPOSIT: 'true' })
    const s = stack
    // Found from FWSS: the GA view it points at, on calibration's chain id; no Lotus node or deal service.
    expect(s.output()).toMatch(/"chainId":314159[^\n]*its contracts as the warm storage service names them/)
    expect(s.output()).toContain(`"fwssView":"${await viewOf()}"`)
    expect(s.serviceUrl).toBeUndefined()

    const auth = basicAuth('admin', PASSWORD)
    const provedCopy = async (name: string) => {
      for (const started = Date.now(); Date.now() - started < 240_000; await new Promise((r) => setTimeout(r, 1000))) {
        const res = await fetch(`${s.appUrl}/ocs/v2.php/apps/gateway/get-file-metadata`, {
          method: 'POST',
          headers: { authorization: auth, 'ocs-apirequest': 'true', 'content-type': 'application/json' },
          body: JSON.stringify({ filePath: `/${name}` }),
        })
        const deals = ((await res.json()) as any).metadata?.file?.details?.groups?.[0]?.deals ?? []
        const proved = deals.find((d: any) => d.route === 'pdp' && d.milestone === 'proved')
        if (proved) return proved
      }
      return undefined
    }
    const put = (name: string, body: string) =>
      fetch(`${s.appUrl}/remote.php/dav/files/admin/${name}`, { method: 'PUT', headers: { authorization: auth }, body })

    expect((await put('before.txt', 'stored on calibration as deployed today')).status).toBe(201)
    expect(await provedCopy('before.txt')).toMatchObject({ provider: expect.stringMatching(/^pdp:\d+$/), state: 'active' })

    // Its owner migrates FWSS to another view while the gateway runs: the gateway follows it, and stores on.
    const migrated = await script('simfoc', ['migrate'], { DATA_DIR: netDir, SIMFOC_RPC_URL: focUrl })
    const newView = await viewOf()
    expect(migrated.stdout).toContain(newView)
    expect((await put('after.txt', 'stored after a migration')).status).toBe(201)
    expect(await provedCopy('after.txt')).toMatchObject({ state: 'active' })
    for (const started = Date.now(); Date.now() - started < 90_000 && !s.output().includes(newView);)
      await new Promise((r) => setTimeout(r, 1000))
    const followed = s
      .output()
      .split('\n')
      .filter((line) => line.includes('the warm storage service was migrated'))
    expect(followed).toHaveLength(1)
    expect(followed[0]).toContain(`→ ${newView}`)
    expect(await s.stop()).toBe(0)
  }, 600_000)

  it("refuses to start on a chain that is not the network's, naming FOC_RPC_URL", async () => {
    const focUrl = urlOf(network!.output(), 'simulated Onchain Cloud')!
    const dir = mkdtempSync(join(tmpdir(), 'calibration-wrong-'))
    try {
      await script('wallet', ['new'], { NETWORK: 'mainnet', DATA_DIR: dir })
      const { code, said } = await refusedStart({ NETWORK: 'mainnet', FOC_RPC_URL: focUrl, DEAL_COPIES: '0', DATA_DIR: dir })
      expect(code).toBe(1)
      expect(said.split('\n')[0]).toBe(
        `FOC_RPC_URL: the node at ${focUrl} is chain 314159 (calibration), not 314 (mainnet) as NETWORK=mainnet asks`,
      )
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)

  it('refuses to start while FWSS points at a view from before GA, naming NETWORK', async () => {
    const focUrl = urlOf(network!.output(), 'simulated Onchain Cloud')!
    const { formerFwssViews } = JSON.parse(readFileSync(join(netDir, 'simfoc', 'contracts.json'), 'utf8')) as { formerFwssViews: string[] }
    // The owner (the simulation's deployer, of the default SIMNET_SEED) points FWSS back at the 1.2.0 view it started
    // with (setViewContract), as a botched upgrade would.
    const owner = privateKeyToAccount(keccak256(toHex(`simulated FOC ${SIMNET_DEFAULT_SEED}: deployer`)))
    const hash = await createWalletClient({ account: owner, transport: http(focUrl) }).writeContract({
      address: PUBLISHED_ANCHORS.calibration.fwss,
      abi: parseAbi(['function setViewContract(address)']),
      functionName: 'setViewContract',
      args: [formerFwssViews[0] as `0x${string}`],
      chain: null,
    })
    await createPublicClient({ transport: http(focUrl) }).waitForTransactionReceipt({ hash })
    const { code, said } = await refusedStart({ NETWORK: 'calibration', FOC_RPC_URL: focUrl, DEAL_COPIES: '0', DATA_DIR: gatewayDir })
    expect(code).toBe(1)
    expect(said.split('\n')[0]).toBe(
      `NETWORK=calibration: the warm storage service's view at ${formerFwssViews[0]}, where FWSS points, has no getPriceList(): a view from before GA (1.3), on the chain at ${focUrl}`,
    )
  }, 120_000)
})
