import { describe, expect, it } from 'vitest'
import type { SyncedDeal } from '../../server/service/deal-store.ts'
import { vanishedDealState } from '../../server/service/deal-sync.ts'

/**
 * A deal the service knew that StateMarketStorageDeal no longer finds: the
 * market actor removes a deal once it is terminated, expired, or never
 * activated by its start epoch, so "deal not found" alone says none of these;
 * what was recorded before tells which.
 */
const known = (state: Partial<SyncedDeal['state']>): SyncedDeal => ({
  dealId: 7,
  proposal: {
    PieceCID: { '/': 'baga6ea4seaqao7s73y24kcutaosvacpdjgfe5pw76ooefnyqw4ynr3d2y6x2mpq' }, PieceSize: 2 ** 30, VerifiedDeal: false, Client: 'f01000', Provider: 'f02000',
    Label: '', StartEpoch: 1000, EndEpoch: 600_000, StoragePricePerEpoch: '0', ProviderCollateral: '0', ClientCollateral: '0',
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
