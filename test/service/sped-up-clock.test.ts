import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createSimnet } from '../../server/simulation/simnet/index.ts'
import { SIMNET_GENESIS, startTestService, T0, type TestService } from './helpers.ts'

/** The deal service on the demo's simulated chain (1 minute ≈ 5 hours): its converters follow the chain's own clock. */
describe('deal service on a sped-up simulated network', () => {
  let t: TestService
  const clock = { now: T0 }
  const simnet = createSimnet({ seed: 'test-seed', genesis: SIMNET_GENESIS, speed: 300, now: () => clock.now })

  beforeAll(async () => {
    t = await startTestService({ deps: { network: simnet, now: () => clock.now } })
  })
  afterAll(() => t.close())

  const epochAt = async (ms: number) =>
    (await t.post('/private/v1/get-network-epoch-from-unix-timestamp', { unixTimestamp: ms })).json.result

  it('converts now to the chain head, and a minute from now to 600 epochs (5 hours) further', async () => {
    expect(await epochAt(T0)).toBe(simnet.headEpoch())
    clock.now = T0 + 60_000
    expect(simnet.headEpoch()).toBe((await epochAt(T0)) + 600)
    expect(await epochAt(T0 + 60_000)).toBe(simnet.headEpoch())
  })

  it('keeps durations in chain days: 540 days are 540 · 2880 epochs at any pace', async () => {
    expect((await t.post('/private/v1/get-network-epoch-duration-from-days', { duration: 540 })).json.result).toBe(540 * 2880)
  })
})
