import { randomBytes } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import type { DealServiceClient } from '../../../server/gateway/deals/market/service-client.ts'
import { providerProfile } from '../../../server/simulation/simnet/provider-kind.ts'
import { startDealStack, type DealStack } from './harness.ts'

/**
 * Curio tells a client neither the deal id nor the publish message while the deal is in its
 * pipeline, sealed or not, only once the pipeline's clean-up removed it (curio
 * market/mk12/mk12_utils.go, tasks/gc/pipeline_meta_gc.go): the gateway finds the deal on chain itself.
 */
let stack: DealStack | undefined
afterEach(async () => {
  await stack?.close()
  stack = undefined
})

/** The deal service's choice, Curio-like providers only. */
const curioOnly = (client: DealServiceClient): DealServiceClient => ({
  ...client,
  async bestProviders(query) {
    const best = await client.bestProviders(query)
    return { ...best, providers: best.providers.filter((p) => providerProfile(p).kind === 'curio') }
  },
})

describe('a deal a Curio-like provider seals slowly', () => {
  it('is found on chain, reaches active, and is never PROPOSAL_EXPIRED though its provider names it only after its start', async () => {
    const s = (stack = await startDealStack({
      copies: 1,
      // Two hours to the start: sealing (1 to 6 hours here) ends at the start epoch, and Curio's
      // pipeline clean-up comes after it.
      startOffsetEpochs: 240,
      service: curioOnly,
    }))
    expect((await s.put('/slow.bin', randomBytes(300_000))).status).toBe(201)
    await s.seal()
    const deals = () => s.gateway.dealStore.ofGroup(1)
    // Ticks two minutes apart, as often as the engine's own timer would come by.
    expect(await s.runUntil(async () => (await deals()).some((d) => d.state === 'active'), { max: 400, epochsPerTick: 4 })).toBe(true)
    const active = (await deals()).find((d) => d.state === 'active')!
    expect(providerProfile(active.provider).kind).toBe('curio')
    // Sealed at its start epoch, and its provider still names neither the deal nor its publish message.
    const chainDeal = await s.simnet.getDeal(active.dealId!)
    expect(chainDeal?.state.SectorStartEpoch).toBe(active.startEpoch)
    expect(s.simnet.headEpoch()).toBeGreaterThanOrEqual(active.startEpoch)
    const said = async () => (await s.providerClient.status(active.provider, active.proposalId!, AbortSignal.timeout(10_000))).status
    expect(await said()).toMatchObject({ chainDealId: 0, publishCid: null })
    expect((await deals()).filter((d) => d.failure?.code === 'PROPOSAL_EXPIRED')).toEqual([])
    // After the provider's pipeline clean-up it names the deal at last: the one the gateway found, still active.
    await s.runUntil(() => false, { max: 20, epochsPerTick: 4 })
    expect(await said()).toMatchObject({ chainDealId: active.dealId, publishCid: expect.anything() })
    expect((await deals()).find((d) => d.id === active.id)).toMatchObject({ state: 'active', dealId: active.dealId })
  }, 120_000)
})
