// The chain's data shapes live in server/shared/chain.ts, where the simulation reads them too; they
// are named here as well so that the adapters' users keep importing them from the network part.
export {
  TRANSFER_TYPES,
  type ChainHead,
  type DealChainState,
  type DealProposal,
  type EpochRange,
  type MarketDeal,
  type MinerInfo,
  type NetworkPort,
  type ProviderTerms,
  type TransferType,
} from '../shared/chain.ts'
