/**
 * Our pay-side stand-ins answer the published ABIs the Synapse SDK uses
 * (synapse-core src/abis): every function, event and error we share with the
 * real contract has the same signature, inputs, outputs and indexed fields,
 * and every function the SDK or FilecoinWarmStorageService calls is there.
 * Also: the build cache of compile.ts.
 */
import * as Abis from '@filoz/synapse-core/abis'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Abi, AbiParameter } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CONTRACTS_DIR, loadFocArtifacts, type FocArtifacts } from '../../../server/simulation/simfoc/contracts/compile.ts'

const type = (p: AbiParameter): string =>
  'components' in p && p.components ? `(${p.components.map(type).join(',')})${p.type.slice('tuple'.length)}` : p.type

/** Each ABI item as a comparable line, by its kind and name. */
function shape(abi: Abi): Map<string, string> {
  const items = new Map<string, string>()
  for (const item of abi) {
    if (item.type === 'function') {
      items.set(
        `function ${item.name}`,
        `${item.inputs.map(type).join(',')} -> ${item.outputs.map(type).join(',')} ${item.stateMutability === 'pure' ? 'view' : item.stateMutability}`,
      )
    } else if (item.type === 'event') {
      items.set(`event ${item.name}`, item.inputs.map((p) => `${type(p)}${p.indexed ? ' indexed' : ''}`).join(','))
    } else if (item.type === 'error') {
      items.set(`error ${item.name}`, item.inputs.map(type).join(','))
    }
  }
  return items
}

/** Our contract, the SDK's ABI for it, and what the SDK (synapse-core, synapse-sdk) or FWSS calls on it. */
const CONTRACTS: [string, Abi, string[]][] = [
  [
    'SimUsdfc',
    Abis.erc20WithPermit,
    ['balanceOf', 'allowance', 'approve', 'transfer', 'transferFrom', 'decimals', 'symbol', 'name', 'nonces', 'version', 'totalSupply'],
  ],
  [
    'FilecoinPay',
    Abis.filecoinPay,
    [
      'accounts',
      'deposit',
      'depositWithPermit',
      'depositWithPermitAndApproveOperator',
      'withdraw',
      'withdrawTo',
      'setOperatorApproval',
      'operatorApprovals',
      'createRail',
      'modifyRailLockup',
      'modifyRailPayment',
      'getRail',
      'getRailsForPayerAndToken',
      'getRailsForPayeeAndToken',
      'settleRail',
      'settleTerminatedRailWithoutValidation',
      'terminateRail',
      'getAccountInfoIfSettled',
      'auctionInfo',
      'getRateChangeQueueSize',
      'COMMISSION_MAX_BPS',
      'NETWORK_FEE_NUMERATOR',
      'NETWORK_FEE_DENOMINATOR',
    ],
  ],
  [
    'ServiceProviderRegistry',
    Abis.serviceProviderRegistry,
    [
      'REGISTRATION_FEE',
      'registerProvider',
      'addProduct',
      'updateProduct',
      'removeProduct',
      'updateProviderInfo',
      'removeProvider',
      'getProvider',
      'getProviderByAddress',
      'getProviderWithProduct',
      'getProvidersByProductType',
      'getProviderIdByAddress',
      'getProviderPayee',
      'isRegisteredProvider',
      'isProviderActive',
      'activeProviderCount',
      'getProviderCount',
      'providerHasProduct',
      'getProductCapabilities',
      'owner',
    ],
  ],
  ['SessionKeyRegistry', Abis.sessionKeyRegistry, ['authorizationExpiry', 'login', 'loginAndFund', 'revoke']],
  ['ProviderIdSet', Abis.providerIdSet, ['getProviderIds', 'containsProviderId', 'addProviderId', 'removeProviderId', 'owner']],
]

describe('pay-side contracts against the published ABIs', () => {
  let artifacts: FocArtifacts
  beforeAll(async () => {
    artifacts = await loadFocArtifacts()
  })

  for (const [name, published, called] of CONTRACTS) {
    it(`${name}: shared functions, events and errors have the published shapes; everything called is there`, () => {
      const ours = shape(artifacts[name].abi)
      const theirs = shape(published)
      const shared = [...ours.keys()].filter((key) => theirs.has(key))
      expect(shared.length).toBeGreaterThan(0)
      for (const key of shared) expect(`${key}: ${ours.get(key)}`).toBe(`${key}: ${theirs.get(key)}`)
      for (const fn of called) {
        expect(theirs.has(`function ${fn}`), `${fn} is published`).toBe(true)
        expect(ours.get(`function ${fn}`), fn).toBe(theirs.get(`function ${fn}`))
      }
      // every event the real contract has and ours emits is in the shared list above; none of ours is unknown to the SDK
      for (const key of ours.keys()) if (key.startsWith('event ')) expect(theirs.has(key), key).toBe(true)
    })
  }

  it('Multicall3 has the aggregate3 that viem multicall calls', () => {
    expect(shape(artifacts.Multicall3.abi).get('function aggregate3')).toBe('(address,bool,bytes)[] -> (bool,bytes)[] payable')
  })
})

describe('compile.ts build cache', () => {
  let cacheDir: string
  beforeAll(async () => {
    cacheDir = await mkdtemp(join(tmpdir(), 'simfoc-cache-'))
  })
  afterAll(async () => {
    await rm(cacheDir, { recursive: true, force: true })
  })

  it('writes one file named by the sources hash, which loaders at once share', async () => {
    const loads = await Promise.all([1, 2, 3].map(() => loadFocArtifacts({ cacheDir, dir: CONTRACTS_DIR })))
    const files = await readdir(cacheDir)
    expect(files).toHaveLength(1)
    expect(files[0]).toMatch(/^[0-9a-f]{64}\.json$/)
    for (const artifacts of loads) expect(Object.keys(artifacts).sort()).toEqual(Object.keys(loads[0]).sort())
    expect(loads[0].FilecoinPay.bytecode).toMatch(/^0x60/)
    // a whole compile of every contract, which a machine busy with other test files stretches past the default minute
  }, 180_000)
})
