import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as Abis from '@filoz/synapse-core/abis'
import { calibration, mainnet } from '@filoz/synapse-core/chains'
import {
  createPublicClient,
  encodeFunctionData,
  getAddress,
  http,
  keccak256,
  parseEventLogs,
  size,
  toHex,
  zeroAddress,
  type Abi,
  type AbiEvent,
  type AbiFunction,
  type Address,
  type PublicClient,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { formatAbiItem } from 'viem/utils'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fwssViewAbi } from '../../../server/network/foc/abi.ts'
import { SimfocChainMismatch } from '../../../server/simulation/simfoc/chain-profiles.ts'
import { loadFocArtifacts, type FocArtifacts } from '../../../server/simulation/simfoc/contracts/compile.ts'
import { IMPLEMENTATION_SLOT } from '../../../server/simulation/simfoc/contracts/upgrade-warm-storage.ts'
import { startSimulatedFoc, type SimulatedFoc } from '../../../server/simulation/simfoc/index.ts'
import { missingFromAbi, revertOf } from './pdp-fixture.ts'

// The warm storage service's upgrade history on the simulated Onchain Cloud, as calibration and
// mainnet have one (filecoin-services deployments.json): FWSS behind an ERC-1967 proxy, pointed
// first at a 1.2.0 view, then upgraded (announcePlannedUpgrade, upgradeToAndCall(impl, migrate(view)))
// to the GA view at another address; and migrated again while it runs.

const start = (dir: string, o: { chain?: 'devnet' | 'calibration' | 'mainnet'; providerCount?: number } = {}) =>
  startSimulatedFoc({ dir, seed: 'history', genesisTimestamp: Date.now() / 1000, epochSeconds: 0.05, providerCount: 1, ...o })

const read = <T>(client: PublicClient, address: Address, abi: Abi | readonly unknown[], functionName: string, args: unknown[] = []) =>
  client.readContract({ address, abi: abi as Abi, functionName, args }) as Promise<T>

/** The service's history, as its events tell it: each view set, each upgrade, each migration. */
async function historyOf(client: PublicClient, fwss: Address) {
  const logs = parseEventLogs({ abi: Abis.fwss, logs: await client.getLogs({ address: fwss, fromBlock: 0n }) })
  return logs
    .filter((l) => ['ViewContractSet', 'Upgraded', 'ContractUpgraded', 'UpgradeAnnounced'].includes(l.eventName))
    .map((l) => ({ event: l.eventName, ...(l.args as Record<string, unknown>) }))
}

describe('the simulated warm storage service has an upgrade history', () => {
  const dir = mkdtempSync(join(tmpdir(), 'simfoc-history-'))
  let foc: SimulatedFoc
  let client: PublicClient
  let artifacts: FocArtifacts
  beforeAll(async () => {
    foc = await start(dir)
    client = createPublicClient({ transport: http(foc.rpcUrl) })
    artifacts = await loadFocArtifacts()
  }, 120_000)
  afterAll(async () => {
    await foc?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('pointed FWSS at a 1.2.0 view first, then upgraded it and migrated it to the GA view at another address', async () => {
    const { fwss, fwssView, fwssImplementation, formerFwssViews } = foc.contracts
    const [oldView] = formerFwssViews
    expect(formerFwssViews).toHaveLength(1)
    expect(oldView).not.toBe(fwssView)
    const history = await historyOf(client, fwss)
    expect(history.map((h) => h.event)).toEqual([
      'Upgraded',
      'ViewContractSet',
      'UpgradeAnnounced',
      'Upgraded',
      'ViewContractSet',
      'ContractUpgraded',
    ])
    expect(history[1]).toMatchObject({ viewContract: oldView })
    expect(history[3]).toMatchObject({ implementation: fwssImplementation })
    expect(history[4]).toMatchObject({ viewContract: fwssView })
    expect(history[5]).toMatchObject({ version: '1.3.1', implementation: fwssImplementation })
    expect(history[0]).not.toMatchObject({ implementation: fwssImplementation })

    // What a client reads from FWSS now: the GA view, the proxy on the new implementation, no upgrade pending.
    expect(await read(client, fwss, Abis.fwss, 'viewContractAddress')).toBe(fwssView)
    const slot = await client.getStorageAt({ address: fwss, slot: IMPLEMENTATION_SLOT })
    expect(getAddress(`0x${slot!.slice(-40)}`)).toBe(fwssImplementation)
    expect(await read(client, fwssView, Abis.fwssView, 'nextUpgrade')).toEqual([zeroAddress, 0n])
    expect(JSON.parse(readFileSync(join(dir, 'contracts.json'), 'utf8'))).toMatchObject({ fwss, fwssView, formerFwssViews })
  })

  it('keeps the 1.2.0 view standing: its functions and 11-field data sets, and no getPriceList', async () => {
    const { fwssView, formerFwssViews } = foc.contracts
    const [oldView] = formerFwssViews
    // The SDK's view ABI (synapse-core 0.5.2) is 1.2's: the old view has all of it, the GA view does not.
    expect(missingFromAbi(Abis.fwssView, artifacts.FilecoinWarmStorageServiceStateView120.abi)).toEqual([])
    const elevenFields = '(uint256,uint256,uint256,address,address,address,uint256,uint256,uint256,uint256,uint256)'
    expect(missingFromAbi(Abis.fwssView, artifacts.FilecoinWarmStorageServiceStateView.abi)).toEqual([
      `function getClientDataSets(address,uint256,uint256) returns (${elevenFields}[])`,
      `function getClientDataSets(address) returns (${elevenFields}[])`,
      `function getDataSet(uint256) returns (${elevenFields})`,
    ])
    const getDataSet = encodeFunctionData({ abi: fwssViewAbi, functionName: 'getDataSet', args: [1n] })
    expect(size((await client.call({ to: oldView, data: getDataSet })).data!)).toBe(11 * 32)
    expect(size((await client.call({ to: fwssView, data: getDataSet })).data!)).toBe(13 * 32)

    expect(await read(client, fwssView, fwssViewAbi, 'getPriceList')).toMatchObject({ token: foc.contracts.usdfc })
    await expect(read(client, oldView, fwssViewAbi, 'getPriceList')).rejects.toThrow(/revert/i)
    // Both read the same service: the provider approved on it, and its proving schedule.
    for (const view of [oldView, fwssView]) {
      expect(await read(client, view, Abis.fwssView, 'getApprovedProviders', [0n, 0n])).toEqual([foc.providers[0].providerId])
      expect((await read<readonly bigint[]>(client, view, Abis.fwssView, 'getPDPConfig')).slice(0, 2)).toEqual([240n, 20n])
    }
  })

  it("has the real service's upgrade functions and events, in the SDK's ABI's shapes", () => {
    const shape = (abi: Abi) =>
      new Set(
        abi
          .filter((x): x is AbiFunction | AbiEvent => x.type === 'function' || x.type === 'event')
          .map((x) => `${x.type} ${formatAbiItem(x)}`),
      )
    const ours = shape([...artifacts.FilecoinWarmStorageService.abi, ...artifacts.FwssUpgrades.abi])
    const names = ['UPGRADE_INTERFACE_VERSION', 'announcePlannedUpgrade', 'migrate', 'proxiableUUID', 'upgradeToAndCall']
    const events = ['ContractUpgraded', 'UpgradeAnnounced', 'Upgraded', 'ViewContractSet']
    const wanted = [...shape(Abis.fwss as Abi)].filter((d) => [...names, ...events].some((n) => d.includes(` ${n}(`)))
    expect(wanted).toHaveLength(names.length + events.length)
    expect(wanted.filter((d) => !ours.has(d))).toEqual([])
  })

  it('lets only the owner upgrade, only to the announced implementation, and each implementation migrate once, through the proxy', async () => {
    const { fwss, fwssImplementation } = foc.contracts
    const owner = privateKeyToAccount(keccak256(toHex('simulated FOC history: deployer'))).address
    const stranger = '0x000000000000000000000000000000000000dEaD'
    const simulate = (account: Address, address: Address, functionName: string, args: unknown[]) =>
      client.simulateContract({ account, address, abi: artifacts.FilecoinWarmStorageService.abi, functionName, args })
    expect(
      await revertOf(simulate(stranger, fwss, 'announcePlannedUpgrade', [{ nextImplementation: fwssImplementation, afterEpoch: 0n }])),
    ).toMatchObject({
      errorName: 'OwnableUnauthorizedAccount',
    })
    // Nothing is announced: the owner cannot upgrade to anything.
    await expect(simulate(owner, fwss, 'upgradeToAndCall', [fwssImplementation, '0x'])).rejects.toThrow(/revert/i)
    // migrate ran for this implementation's version already, and never runs outside the proxy.
    expect(await revertOf(simulate(owner, fwss, 'migrate', [zeroAddress]))).toMatchObject({ errorName: 'InvalidInitialization' })
    expect(await revertOf(simulate(owner, fwssImplementation, 'migrate', [zeroAddress]))).toMatchObject({
      errorName: 'UUPSUnauthorizedCallContext',
    })
    expect(await revertOf(simulate(owner, fwss, 'initialize', [240n, 20n, owner]))).toMatchObject({ errorName: 'InvalidInitialization' })
  })

  it('migrates again while it runs: a new view at a new address, the same service state, the former views still answering', async () => {
    const before = foc.contracts
    const view = await foc.migrate()
    expect(view).not.toBe(before.fwssView)
    expect(await read(client, before.fwss, Abis.fwss, 'viewContractAddress')).toBe(view)
    expect(foc.contracts).toMatchObject({
      fwss: before.fwss,
      fwssView: view,
      formerFwssViews: [...before.formerFwssViews, before.fwssView],
    })
    expect(foc.contracts.fwssImplementation).not.toBe(before.fwssImplementation)
    expect(JSON.parse(readFileSync(join(dir, 'contracts.json'), 'utf8'))).toMatchObject({ fwssView: view })
    const history = await historyOf(client, before.fwss)
    expect(history.slice(-4)).toMatchObject([
      { event: 'UpgradeAnnounced' },
      { event: 'Upgraded', implementation: foc.contracts.fwssImplementation },
      { event: 'ViewContractSet', viewContract: view },
      { event: 'ContractUpgraded', version: '1.3.1', implementation: foc.contracts.fwssImplementation },
    ])
    expect(await read(client, view, fwssViewAbi, 'getApprovedProviders', [0n, 0n])).toEqual([foc.providers[0].providerId])
    expect(await read(client, before.fwssView, fwssViewAbi, 'getPriceList')).toMatchObject({ token: foc.contracts.usdfc })
  }, 60_000)
})

describe('the simulated Onchain Cloud standing as calibration and mainnet do today', () => {
  const dirs: string[] = []
  const fresh = () => {
    const dir = mkdtempSync(join(tmpdir(), 'simfoc-profile-'))
    dirs.push(dir)
    return dir
  }
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  })

  it("has calibration's chain id, its published addresses, and the old view where the SDK looks for it", async () => {
    const dir = fresh()
    let foc = await start(dir, { chain: 'calibration' })
    try {
      const client = createPublicClient({ transport: http(foc.rpcUrl) })
      expect(await client.getChainId()).toBe(314_159)
      const c = foc.contracts
      // filecoin-services deployments.json "314159": FWSS_PROXY_ADDRESS, ENDORSEMENT_SET_ADDRESS; Multicall3's canonical address.
      expect(c.fwss).toBe('0x02925630df557F957f70E112bA06e50965417CA0')
      expect(c.endorsements).toBe('0xAA2f7CfC7ecAc616EC9C1f6d700fAd19087FAC84')
      expect(c.multicall3).toBe('0xcA11bde05977b3631167028862bE2a173976CA11')
      for (const address of [c.fwss, c.endorsements, c.multicall3]) expect(size((await client.getCode({ address }))!)).toBeGreaterThan(100)
      // The view FWSS 1.2.0 was deployed with, where synapse-core 0.5.2 names calibration's view, no longer FWSS's.
      expect(c.formerFwssViews).toEqual([calibration.contracts.fwssView.address])
      await expect(read(client, calibration.contracts.fwssView.address, fwssViewAbi, 'getPriceList')).rejects.toThrow(/revert/i)
      // Every other contract only FWSS names.
      const names = Object.fromEntries(
        await Promise.all(
          (
            [
              ['pdp', 'pdpVerifierAddress'],
              ['filecoinPay', 'paymentsContractAddress'],
              ['usdfc', 'usdfcTokenAddress'],
              ['serviceProviderRegistry', 'serviceProviderRegistry'],
              ['sessionKeyRegistry', 'sessionKeyRegistry'],
              ['fwssView', 'viewContractAddress'],
            ] as const
          ).map(async ([key, getter]) => [key, await read<Address>(client, c.fwss, Abis.fwss, getter)]),
        ),
      )
      expect(names).toEqual({
        pdp: c.pdp,
        filecoinPay: c.filecoinPay,
        usdfc: c.usdfc,
        serviceProviderRegistry: c.serviceProviderRegistry,
        sessionKeyRegistry: c.sessionKeyRegistry,
        fwssView: c.fwssView,
      })
      expect(c.fwssView).not.toBe(calibration.contracts.fwssView.address)
      expect(await read(client, c.fwssView, fwssViewAbi, 'getPriceList')).toMatchObject({ token: c.usdfc })
      // The endorsement set, created at its address, is the service owner's.
      expect(await read<readonly bigint[]>(client, c.endorsements, Abis.providerIdSet, 'getProviderIds')).toEqual([
        foc.providers[0].providerId,
      ])
      await foc.close()

      // Restarted, the chain replays its pre-history with the rest; another SIMFOC_CHAIN is refused.
      foc = await start(dir, { chain: 'calibration' })
      expect(foc.fresh).toBe(false)
      expect(foc.contracts).toEqual(c)
      const resumed = createPublicClient({ transport: http(foc.rpcUrl) })
      expect(await read(resumed, c.fwss, Abis.fwss, 'viewContractAddress')).toBe(c.fwssView)
      expect(size((await resumed.getCode({ address: calibration.contracts.fwssView.address }))!)).toBeGreaterThan(100)
      await foc.close()
      await expect(start(dir)).rejects.toThrow(SimfocChainMismatch)
      await expect(start(dir)).rejects.toThrow(/stands as calibration \(chain 314159\), not devnet.*SIMFOC_CHAIN=calibration/)
    } finally {
      await foc.close().catch(() => undefined)
    }
  }, 120_000)

  it("has mainnet's chain id and published addresses", async () => {
    const foc = await start(fresh(), { chain: 'mainnet', providerCount: 0 })
    try {
      const client = createPublicClient({ transport: http(foc.rpcUrl) })
      expect(await client.getChainId()).toBe(314)
      // deployments.json "314"
      expect(foc.contracts).toMatchObject({
        fwss: '0x8408502033C418E1bbC97cE9ac48E5528F371A9f',
        endorsements: '0x59eFa2e8324E1551d46010d7B0B140eE2F5c726b',
        formerFwssViews: [mainnet.contracts.fwssView.address],
      })
      expect(await read(client, foc.contracts.fwss, Abis.fwss, 'viewContractAddress')).toBe(foc.contracts.fwssView)
    } finally {
      await foc.close()
    }
  }, 60_000)
})
