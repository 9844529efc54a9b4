import { dealStatus } from '../../network/deal-status.ts'
import type { Simnet } from '../../network/simnet/index.ts'
import type { SimulatedProviders } from '../../network/simnet/sim-providers.ts'
import type { StorageProviderPort } from './provider-port.ts'

/** The provider port over the embedded simulated network and its simulated providers. */
export function simnetProviderPort(simnet: Simnet, providers: SimulatedProviders): StorageProviderPort {
  return {
    epochSeconds: simnet.clock.epochSeconds,
    chainHead: async () => simnet.headEpoch(),
    async ask(provider) {
      const terms = await simnet.providerTerms(provider)
      return terms && { minPieceSize: terms.minPieceSize, maxPieceSize: terms.maxPieceSize }
    },
    propose: (proposal, transfer, options) => providers.propose(proposal, transfer, options),
    proposalState: async (provider, proposalId) => providers.proposalState(provider, proposalId),
    async dealOnChain(dealId, head) {
      const deal = await simnet.getDeal(dealId)
      return deal ? dealStatus(deal, head) : null
    },
    retrieveBlock: (provider, pieceCid, blockCid, options) => providers.retrieveBlock(provider, pieceCid, blockCid, options),
    retrievePiece: (provider, pieceCid, options) => providers.retrievePiece(provider, pieceCid, options),
  }
}
