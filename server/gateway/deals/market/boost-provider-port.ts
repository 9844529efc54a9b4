import { randomUUID } from 'node:crypto'
import type { ProviderClient } from '../../../network/boost/client.ts'
import { dealStatus } from '../../../network/deal-status.ts'
import { NetworkError } from '../../../network/errors.ts'
import { blockBytes, pieceHead, retrievalGet } from '../../../network/http-retrieval.ts'
import { largestPieceTaken } from '../../../network/provider-asks.ts'
import type { NetworkPort } from '../../../network/types.ts'
import { chainCid } from '../../../network/wallet/message.ts'
import type { ProposalState, StorageProviderPort } from './provider-port.ts'

const DEFAULT_CALL_MS = 30_000
/** What Boost says when it has no deal by that UUID; its other status errors are its own trouble, not the deal's. */
const NO_SUCH_DEAL = /no storage deal found/i

/**
 * The provider port as a Boost client: the chain through the Lotus JSON-RPC
 * adapter, providers through the storage market protocols over libp2p
 * (proposals, status) and their HTTP retrieval endpoint: trustless
 * `/ipfs/<cid>` raw blocks for retrieval checks and reads (booster-http serves
 * the Trustless Gateway API by default, filecoin-project/boost-docs
 * retrieving-data-from-filecoin/advanced-http-configuration.md), `/piece/<cid>`
 * for repair's whole-group reloads. Nothing here knows whether the network is simulated.
 */
export function boostProviderPort(o: { chain: NetworkPort; client: ProviderClient; fetch?: typeof fetch }): StorageProviderPort {
  const { chain, client } = o
  const doFetch = o.fetch ?? fetch
  const signalOf = (options?: { signal?: AbortSignal }) => options?.signal ?? AbortSignal.timeout(DEFAULT_CALL_MS)

  /** A GET to the provider's HTTP retrieval endpoint, as its peer info names it. */
  async function get(provider: string, path: string, accept: string, signal: AbortSignal): Promise<Response> {
    const base = await client.retrievalUrl(provider, signal)
    if (!base)
      throw new NetworkError('REFUSED', `provider ${provider} serves no HTTP retrieval`, { providerReason: 'no HTTP retrieval transport' })
    return retrievalGet(`${base}${path}`, accept, signal, provider, doFetch)
  }

  return {
    epochSeconds: chain.clock.epochSeconds,
    chainHead: async () => (await chain.chainHead()).epoch,
    networkVersion: () => chain.networkVersion(),
    idAddress: (address) => chain.lookupId(address),
    async ask(provider, options) {
      const [ask, miner] = await Promise.all([client.ask(provider, signalOf(options)), chain.minerInfo(provider)])
      return (
        ask && {
          price: BigInt(ask.price),
          verifiedPrice: BigInt(ask.verifiedPrice),
          minPieceSize: ask.minPieceSize,
          // A piece never spans sectors: an 8 MiB-sector devnet's 32 GiB ask takes 8 MiB.
          maxPieceSize: largestPieceTaken(ask.maxPieceSize, miner?.sectorSize),
        }
      )
    },
    async servesHttpRetrieval(provider, options) {
      return (await client.retrievalUrl(provider, signalOf(options))) !== null
    },
    async propose(proposal, transfer, options) {
      const dealUuid = randomUUID()
      const answer = await client.propose(
        {
          dealUuid,
          proposal,
          dataRoot: transfer.dataRoot,
          transfer: { url: transfer.url, headers: transfer.headers, size: transfer.size, clientId: dealUuid },
          removeUnsealedCopy: false,
          skipIpniAnnounce: false,
        },
        signalOf(options),
      )
      const sent = { signedProposal: answer.signedProposal, proposalCid: chainCid(answer.signedProposal).toString() }
      return answer.accepted
        ? { accepted: true, proposalId: dealUuid, ...sent }
        : { accepted: false, reason: answer.message || 'REJECTED', ...sent }
    },
    async proposalState(provider, dealUuid, options): Promise<ProposalState> {
      const answer = await client.status(provider, dealUuid, signalOf(options))
      const s = answer.status
      // Boost answers a null status with an error both when it has no such deal and when it failed to
      // look (its database, the sealer, the client's key): only the first says the deal is gone
      // (boost storagemarket/lp2pimpl/net.go, getDealStatus).
      if (!s) return NO_SUCH_DEAL.test(answer.error) ? { state: 'unknown' } : { state: 'no-answer', reason: answer.error || 'no status' }
      if (s.error) return { state: 'failed', reason: s.error }
      if (s.chainDealId > 0) return { state: 'published', dealId: s.chainDealId }
      // Curio reports ChainDealID 0 until sealing and indexing are done (curio market/mk12/mk12_utils.go);
      // the deal id is in the return of the publish message it names.
      if (s.publishCid) {
        const dealId = await chain.publishedDealId(s.publishCid, s.proposal)
        if (dealId !== null) return { state: 'published', dealId }
      }
      return { state: 'transferring' }
    },
    async providerCollateral(pieceSize, verified) {
      // 1.2 × the minimum (Boost's client does the same): the bound moves with the network's power.
      const { min, max } = await chain.collateralBounds(pieceSize, verified)
      const withMargin = (min * 6n) / 5n
      return (withMargin > max ? max : withMargin).toString()
    },
    async clientFunds(client) {
      const [dataCap, balance] = await Promise.all([chain.dataCap(client), chain.marketBalance(client)])
      return { dataCap, ...balance }
    },
    nextDealId: () => chain.nextDealId(),
    async dealOnChain(dealId, head) {
      const deal = await chain.getDeal(dealId)
      return deal ? { ...dealStatus(deal, head), proposal: deal.proposal } : null
    },
    async retrieveBlock(provider, _pieceCid, blockCid, options) {
      return blockBytes(await get(provider, `/ipfs/${blockCid}`, 'application/vnd.ipld.raw', signalOf(options)), provider, blockCid)
    },
    retrievePiece(provider, pieceCid, carSize, options) {
      return (async function* () {
        // The unsealed piece ends in zero padding: the CAR is its first carSize bytes.
        yield* pieceHead(await get(provider, `/piece/${pieceCid}`, 'application/octet-stream', signalOf(options)), carSize, provider)
      })()
    },
  }
}
