import { rmSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { createSimnet } from '../../server/simulation/simnet/index.ts'
import type { SyncedDeal } from '../../server/service/deal-store.ts'
import { vanishedDealState } from '../../server/service/deal-sync.ts'
import { SIMNET_GENESIS, startTestService, T0 } from './helpers.ts'

/**
 * A deal the service knew that StateMarketStorageDeal no longer finds: the
 * market actor removes a deal once it is terminated, expired, or never
 * activated by its start epoch, so "deal not found" alone says none of these;
 * what was recorded before tells which.
 */
const known = (state: Partial<SyncedDeal['state']>): SyncedDeal => ({
  dealId: 7,
  proposal: {
    PieceCID: { '/': 'baga6ea4seaqao7s73y24kcutaosvacpdjgfe5pw76ooefnyqw4ynr3d2y6x2mpq' },
    PieceSize: 2 ** 30,
    VerifiedDeal: false,
    Client: 'f01000',
    Provider: 'f02000',
    Label: '',
    StartEpoch: 1000,
    EndEpoch: 600_000,
    StoragePricePerEpoch: '0',
    ProviderCollateral: '0',
    ClientCollateral: '0',
  },
  state: { status: 'active', publishedEpoch: 900, onChainStartEpoch: 950, onChainEndEpoch: -1, ...state },
})

describe('a known deal gone from the market', () => {
  it('is expired after its end epoch', () => {
    expect(vanishedDealState(known({}), 600_000)).toMatchObject({ status: 'expired', onChainEndEpoch: 600_000 })
  })

  it('is slashed when it goes before its end while active, ending no later than this pass', () => {
    expect(vanishedDealState(known({}), 20_000)).toMatchObject({ status: 'slashed', onChainEndEpoch: 20_000, onChainStartEpoch: 950 })
  })

  it('never activated: published, then expired unsealed', () => {
    expect(vanishedDealState(known({ status: 'published', onChainStartEpoch: -1 }), 1_200)).toMatchObject({ status: 'published-expired' })
  })
})

describe('stopping the deal service during a sync pass', () => {
  it('ends the pass after the calls in flight instead of walking every deal id first', async () => {
    // A node that takes half a second per StateMarketStorageDeal: a whole pass over the market's deal ids takes many seconds.
    const simnet = createSimnet({ seed: 'test-seed', genesis: SIMNET_GENESIS, now: () => T0 })
    let asked = 0
    const slowChain = new Proxy(simnet, {
      get(target, key) {
        const value = Reflect.get(target, key)
        if (key === 'getDeal') {
          return async (...args: Parameters<typeof simnet.getDeal>) => {
            asked++
            await sleep(500)
            return simnet.getDeal(...args)
          }
        }
        return typeof value === 'function' ? value.bind(target) : value
      },
    })
    expect(await simnet.nextDealId()).toBeGreaterThan(40)
    const { service, server, dir } = await startTestService({ deps: { network: slowChain, background: true } })
    await expect.poll(() => asked, { timeout: 10_000, interval: 20 }).toBeGreaterThan(0)

    const started = performance.now()
    await server.close(100)
    await service.close()
    // At most one round of calls in flight (500 ms), never the dozens of rounds still to go.
    expect(performance.now() - started).toBeLessThan(2_000)
    rmSync(dir, { recursive: true, force: true })
  }, 30_000)
})
