import * as Abis from '@filoz/synapse-core/abis'
import * as Piece from '@filoz/synapse-core/piece'
import * as SP from '@filoz/synapse-core/sp'
import { getPDPProvider } from '@filoz/synapse-core/sp-registry'
import * as WarmStorage from '@filoz/synapse-core/warm-storage'
import { Synapse } from '@filoz/synapse-sdk'
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createPublicClient, createWalletClient, http, keccak256, parseEther, parseUnits, toHex, type Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { deployFoc, mintUsdfc, type FocAddresses } from '../../../server/simulation/simfoc/contracts/deploy.ts'
import { startEvmNode, type EvmNode } from '../../../server/simulation/simfoc/evm-node.ts'
import { createViemPdpChain, registerPdpProvider } from '../../../server/simulation/simfoc/pdp-provider-chain.ts'
import { createPdpProvider, type PdpProvider } from '../../../server/simulation/simfoc/pdp-provider.ts'
import { simulatedFocChain } from './sdk-chain.ts'

/**
 * End to end on the simulated chain: two simulated Curio providers register
 * themselves in our ServiceProviderRegistry, the unchanged Synapse SDK stores
 * a file on both (upload to one, pull to the other, data sets created by the
 * providers' own messages to our PDPVerifier and FWSS), and each provider then
 * proves possession on chain. Runs once the PDPVerifier stand-in is in the
 * tree (helper "pdp"'s contracts).
 */

const contracts = join(dirname(fileURLToPath(import.meta.url)), '../../../server/simulation/simfoc/contracts')
const withPdpContracts = existsSync(join(contracts, 'PDPVerifier.sol'))

// Block time a month behind the wall clock, so the SDK's wall-clock permit deadlines stay ahead of it.
const GENESIS = Math.floor(Date.now() / 86_400_000) * 86_400 - 30 * 86_400
const keyOf = (name: string): Hex => keccak256(toHex(`simfoc curio e2e: ${name}`))
const USDFC = (n: string) => parseUnits(n, 18)

function bytes(size: number, seed: string): Uint8Array {
  const out = new Uint8Array(size)
  for (let i = 0, n = 0; i < size; n++, i += 32)
    out.set(
      createHash('sha256')
        .update(`${seed}/${n}`)
        .digest()
        .subarray(0, Math.min(32, size - i)),
      i,
    )
  return out
}

describe.skipIf(!withPdpContracts)('simulated Curio providers on the simulated chain, through the Synapse SDK', () => {
  let epoch = 1000
  let node: EvmNode
  let addresses: FocAddresses
  let chain: ReturnType<typeof simulatedFocChain>
  const providers: PdpProvider[] = []
  const dirs: string[] = []
  const providerIds: bigint[] = []
  let pumping = true
  let pump: Promise<void>

  beforeAll(async () => {
    const deployerKey = keyOf('deployer')
    node = await startEvmNode({
      headEpoch: () => epoch,
      genesisTimestamp: GENESIS,
      seed: 'curio e2e',
      accounts: [{ address: privateKeyToAccount(deployerKey).address, wei: parseEther('1000') }],
    })
    addresses = await deployFoc(node.url, deployerKey, {
      // the service's upgrade waits for the epoch after its announcement: this chain's clock is ours to move
      untilEpoch: async (next) => {
        epoch = Math.max(epoch, Number(next))
      },
    })
    // The SDK's Chain as the gateway's client builds it (the lead's test helper).
    chain = simulatedFocChain(node.url, addresses, GENESIS)
    const deployer = createWalletClient({
      account: privateKeyToAccount(deployerKey),
      chain,
      transport: http(node.url),
      pollingInterval: 20,
    })

    for (const name of ['alpha', 'beta']) {
      const key = keyOf(`provider ${name}`)
      await node.setBalance(privateKeyToAccount(key).address, parseEther('100'))
      const dir = await mkdtemp(join(tmpdir(), `curio-e2e-${name}-`))
      dirs.push(dir)
      const provider = await createPdpProvider({
        dir,
        chain: createViemPdpChain({ rpcUrl: node.url, privateKey: key, pdpVerifier: addresses.pdp }),
        recordKeepers: [addresses.fwss],
        pollMs: 0,
      })
      const url = await provider.listen()
      providers.push(provider)
      const providerId = await registerPdpProvider({
        rpcUrl: node.url,
        privateKey: key,
        serviceProviderRegistry: addresses.serviceProviderRegistry,
        name: `sim-curio-${name}`,
        description: 'simulated Curio PDP provider',
        offering: {
          serviceURL: url,
          minPieceSizeInBytes: 127n,
          maxPieceSizeInBytes: 1_065_353_216n,
          storagePricePerTibPerDay: USDFC('0.1'),
          minProvingPeriodInEpochs: 240n,
          location: 'loopback',
          paymentTokenAddress: addresses.usdfc,
        },
        pollingIntervalMs: 20,
      })
      providerIds.push(providerId)
      await WarmStorage.addApprovedProviderSync(deployer, { providerId })
    }
    // The SDK wants an endorsed provider for the first copy.
    const { request } = await createPublicClient({ chain, transport: http(node.url) }).simulateContract({
      account: deployer.account,
      address: addresses.endorsements,
      abi: Abis.providerIdSet,
      functionName: 'addProviderId',
      args: [providerIds[0]],
    })
    await createPublicClient({ chain, transport: http(node.url) }).waitForTransactionReceipt({
      hash: await deployer.writeContract(request),
    })

    // The chain moves an epoch at a time, and both providers see every head before the next one.
    pump = (async () => {
      while (pumping) {
        epoch++
        for (const provider of providers) await provider.tick().catch(() => {})
        await new Promise((r) => setTimeout(r, 5))
      }
    })()
  }, 180_000)

  afterAll(async () => {
    pumping = false
    await pump
    for (const provider of providers) await provider.close()
    await node?.close()
    for (const dir of dirs) await rm(dir, { recursive: true, force: true })
  })

  it('registers with the PDP product the SDK reads back', async () => {
    const client = createPublicClient({ chain, transport: http(node.url) })
    const provider = await getPDPProvider(client, { providerId: providerIds[0] })
    expect(provider?.pdp).toMatchObject({
      serviceURL: providers[0].url,
      minPieceSizeInBytes: 127n,
      maxPieceSizeInBytes: 1_065_353_216n,
      storagePricePerTibPerDay: USDFC('0.1'),
      minProvingPeriodInEpochs: 240n,
      location: 'loopback',
      paymentTokenAddress: addresses.usdfc.toLowerCase(),
    })
    expect(provider?.serviceProvider).toBe(providers[0].address)
  })

  it('stores a file on both providers with synapse.storage.upload, and each proves it on chain', async () => {
    const key = keyOf('client')
    const account = privateKeyToAccount(key)
    await node.setBalance(account.address, parseEther('10'))
    await mintUsdfc(node.url, keyOf('deployer'), addresses.usdfc, account.address, USDFC('100'))
    const synapse = Synapse.create({ account, chain, transport: http(node.url), source: 'simfoc-curio-e2e' })
    const data = bytes(300_000, 'e2e file')

    // What the SDK asks for, and a margin: the chain here runs hundreds of epochs while the SDK polls, and the
    // first rail's payments would otherwise eat into the lockup the second data set needs.
    const { costs } = await synapse.storage.prepare({ dataSize: BigInt(data.length) })
    await synapse.payments.fundSync({ amount: costs.depositNeeded + USDFC('5'), needsFwssMaxApproval: costs.needsFwssMaxApproval })
    const result = await synapse.storage.upload(data)
    expect(result.complete).toBe(true)
    expect(result.pieceCid.toString()).toBe(Piece.calculate(data).toString())
    expect(result.copies.map((c) => c.providerId).sort()).toEqual([...providerIds].sort())

    // Both hold the bytes and serve them.
    for (const provider of providers) {
      const copy = await Piece.downloadAndValidate({ url: `${provider.url}/piece/${result.pieceCid}`, expectedPieceCid: result.pieceCid })
      expect(copy.length).toBe(data.length)
    }

    // Each provider's data set gets its first proof, and the verifier records it.
    const publicClient = createPublicClient({ chain, transport: http(node.url) })
    for (const provider of providers) {
      while (provider.proofs().length === 0) await new Promise((r) => setTimeout(r, 20))
      const [proof] = provider.proofs()
      let receipt = null
      while (!receipt) receipt = await publicClient.getTransactionReceipt({ hash: proof.txHash as Hex }).catch(() => null)
      expect(receipt.status).toBe('success')
      const lastProven = await publicClient.readContract({
        address: addresses.pdp,
        abi: Abis.pdp,
        functionName: 'getDataSetLastProvenEpoch',
        args: [BigInt(proof.dataSetId)],
      })
      // The chain runs on while this reads, so the provider may have proved again since the first proof: the
      // verifier's last proven epoch is the block of one of this provider's proofs of the set, the first or later.
      const proofBlocks: bigint[] = []
      for (const p of provider.proofs().filter((p) => p.dataSetId === proof.dataSetId)) {
        const r = await publicClient.getTransactionReceipt({ hash: p.txHash as Hex }).catch(() => null)
        if (r?.status === 'success') proofBlocks.push(r.blockNumber)
      }
      expect(proofBlocks).toContain(lastProven)
      expect(lastProven >= receipt.blockNumber).toBe(true)
      const dataSet = await SP.getDataSet({ serviceURL: provider.url!, dataSetId: BigInt(proof.dataSetId) })
      expect(dataSet.pieces.map((p) => p.pieceCid.toString())).toEqual([result.pieceCid.toString()])
    }
  }, 300_000)
})
