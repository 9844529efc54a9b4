import * as dagCbor from '@ipld/dag-cbor'
import type { MarketDeal } from '../../shared/chain.ts'
import { cborCid } from './chain-wire.ts'
import { addressParam, INVALID_PARAMS, LOTUS_ERROR, RpcError, type RpcContext, type RpcMethods } from './rpc-context.ts'

/** A deal as Lotus's StateMarketStorageDeal/StateMarketDeals put it. */
const lotusDeal = (d: MarketDeal) => ({
  Proposal: d.proposal,
  State: { ...d.state, SectorNumber: d.state.SectorStartEpoch >= 0 ? d.dealId % 100_000 : 0 },
})

/** The storage market actor: its deals, its NextID, escrow, and the collateral a deal must carry. */
export function marketMethods({ simnet, epochOf }: RpcContext): RpcMethods {
  return {
    // Only the market actor's state, and of it what the simulation keeps: NextID (go-state-types builtin/v16/market State).
    async 'Filecoin.StateReadState'([a, tsk]) {
      const id = await simnet.lookupId(addressParam(a))
      if (id !== 'f05') throw new RpcError(LOTUS_ERROR, `the simulated chain keeps no state for actor ${a}`)
      epochOf(tsk)
      return {
        Balance: '0',
        Code: { '/': cborCid(dagCbor.encode('simnet storagemarket actor')).toString() },
        State: { NextID: await simnet.nextDealId(), LastCron: simnet.headEpoch() },
      }
    },
    async 'Filecoin.StateMarketBalance'([a]) {
      const b = await simnet.marketBalance(addressParam(a))
      return { Escrow: b.escrow.toString(), Locked: b.locked.toString() }
    },
    async 'Filecoin.StateDealProviderCollateralBounds'([size, verified]) {
      if (typeof size !== 'number' || !Number.isSafeInteger(size) || size <= 0 || typeof verified !== 'boolean') {
        throw new RpcError(INVALID_PARAMS, 'expected a padded piece size and a verified flag')
      }
      const b = await simnet.collateralBounds(size, verified)
      return { Min: b.min.toString(), Max: b.max.toString() }
    },
    async 'Filecoin.StateMarketStorageDeal'([id]) {
      if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0)
        throw new RpcError(INVALID_PARAMS, 'expected a deal id as the first parameter')
      const deal = await simnet.getDeal(id)
      // Lotus's words (chain/stmgr/actors.go): a deal removed from the market state is "not found".
      if (!deal)
        throw new RpcError(
          LOTUS_ERROR,
          `deal ${id} not found - deal may not have completed sealing before deal proposal start epoch, or deal may have been slashed`,
        )
      return lotusDeal(deal)
    },
    async 'Filecoin.StateMarketDeals'() {
      return Object.fromEntries(simnet.marketDeals().map((d) => [String(d.dealId), lotusDeal(d)]))
    },
  }
}
