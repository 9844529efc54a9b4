import { dealStatus } from '../../network/deal-status.ts'
import type { Simnet } from '../../network/simnet/index.ts'
import type { NetworkPort } from '../../network/types.ts'
import type { SimulatedProviders } from '../../network/simnet/sim-providers.ts'
import type { StorageProviderPort } from './provider-port.ts'

/**
 * The provider port over the simulated providers. The chain is read through
 * `chain`: the Lotus JSON-RPC adapter pointed at the simulated chain's RPC in
 * the stack (the code path of a real network), the simulated chain itself in
 * unit tests.
 */
export function simnetProviderPort(simnet: Simnet, providers: SimulatedProviders, chain: NetworkPort = simnet): StorageProviderPort {
  return {
    epochSeconds: chain.clock.epochSeconds,
    chainHead: async () => (await chain.chainHead()).epoch,
    async ask(provider) {
      const terms = await simnet.providerTerms(provider)
      return terms && { minPieceSize: terms.minPieceSize, maxPieceSize: terms.maxPieceSize }
    },
    propose: (proposal, transfer, options) => providers.propose(proposal, transfer, options),
    proposalState: async (provider, proposalId) => providers.proposalState(provider, proposalId),
    async dealOnChain(dealId, head) {
      const deal = await chain.getDeal(dealId)
      return deal ? dealStatus(deal, head) : null
    },
    retrieveBlock: (provider, pieceCid, blockCid, options) => providers.retrieveBlock(provider, pieceCid, blockCid, options),
    retrievePiece: (provider, pieceCid, options) => providers.retrievePiece(provider, pieceCid, options),
  }
}
