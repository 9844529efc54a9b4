/**
 * The deal service on a Lotus node: it knows providers' terms only from their
 * storage asks over libp2p (the peer found through StateMinerInfo). Here the
 * "Lotus node" is the simulated chain's JSON-RPC and the providers its libp2p
 * hosts, so the code path is the one of a real network.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLotusNetwork } from '../../server/network/lotus/index.ts'
import { createSimnet } from '../../server/simulation/simnet/index.ts'
import { startProviderHosts, type ProviderHosts } from '../../server/simulation/simnet/provider-hosts.ts'
import { SIMNET_RPC_PATH, simnetRpcListener } from '../../server/simulation/simnet/rpc-server.ts'
import { createSimulatedProviders } from '../../server/simulation/simnet/sim-providers.ts'
import type { ProviderTerms } from '../../server/network/types.ts'
import { startServer, type RunningServer } from '../../server/shared/http.ts'
import { SIMNET_GENESIS, startTestService, T0, type TestService } from './helpers.ts'

const simnet = createSimnet({ seed: 'test-seed', genesis: SIMNET_GENESIS, now: () => T0 })
const dir = mkdtempSync(join(tmpdir(), 'provider-asks-'))
const sim = createSimulatedProviders({ simnet, dir })
let hosts: ProviderHosts
let rpc: RunningServer
let t: TestService
let terms: ProviderTerms[]

beforeAll(async () => {
  hosts = await startProviderHosts({ simnet, providers: sim, seed: 'test-seed' })
  rpc = await startServer(simnetRpcListener(simnet), 0, '127.0.0.1')
  const lotus = createLotusNetwork({ url: `${rpc.url}${SIMNET_RPC_PATH}`, clock: simnet.clock })
  t = await startTestService({ deps: { network: lotus } })
  terms = await Promise.all((await simnet.listProviders()).map(async (id) => (await simnet.providerTerms(id))!))
})
afterAll(async () => {
  await t?.close()
  await hosts?.close()
  await rpc?.close()
  rmSync(dir, { recursive: true, force: true })
})

const availability = (provider: string, extra: Record<string, unknown> = {}) =>
  t.post('/private/v1/get-provider-availability', {
    providerAddressId: provider,
    duration: 518400,
    storagePricePerEpoch: '1000000000',
    verifiedDeal: true,
    transferSize: 1_000_000,
    transferType: 'http',
    removeUnsealedCopy: false,
    ...extra,
  })

describe('deal service on a Lotus node: terms from storage asks', () => {
  it('answers availability from a provider’s ask', async () => {
    const p = terms.find((x) => x.online && BigInt(x.verifiedPrice) <= 1_000_000_000n && x.maxPieceSize >= 2 ** 21)!
    expect((await availability(p.id)).json).toMatchObject({ result: { isAvailable: true } })
  })

  it('says PRICE_TOO_LOW when the offer is below the asked price', async () => {
    const p = terms.find((x) => x.online && BigInt(x.unverifiedPrice) > 0n)!
    expect((await availability(p.id, { verifiedDeal: false, storagePricePerEpoch: '0' })).json).toMatchObject({
      result: { isAvailable: false, reason: 'PRICE_TOO_LOW' },
    })
  })

  it('says PIECE_SIZE_NOT_ACCEPTED for a piece bigger than the provider’s sectors, though its ask takes 32 GiB', async () => {
    // A devnet's miner: 8 MiB sectors, and the ask's MaxPieceSize left at its default.
    const cheap = terms.filter((x) => x.online && BigInt(x.verifiedPrice) <= 1_000_000_000n && x.maxPieceSize >= 2 ** 30)
    const p = cheap[cheap.length - 1]
    simnet.setSectorSize(p.id, 8 * 1024 * 1024)
    expect((await availability(p.id, { transferSize: 12 * 1024 * 1024 })).json).toMatchObject({
      result: { isAvailable: false, reason: 'PIECE_SIZE_NOT_ACCEPTED' },
    })
    expect((await availability(p.id, { transferSize: 4 * 1024 * 1024 })).json).toMatchObject({ result: { isAvailable: true } })
  })

  it('says SERVICE_UNAVAILABLE for a provider nobody can dial', async () => {
    const p = terms.find((x) => !x.online)!
    expect(hosts.endpoints.has(p.id)).toBe(false)
    expect((await availability(p.id)).json).toMatchObject({ result: { isAvailable: false, reason: 'SERVICE_UNAVAILABLE' } })
  })
})
