import { randomUUID } from 'node:crypto'
import type { ProviderClient } from '../../network/boost/client.ts'
import { dealStatus } from '../../network/deal-status.ts'
import { NetworkError, protocolError, timedOut } from '../../network/errors.ts'
import type { NetworkPort } from '../../network/types.ts'
import { chainCid } from '../../network/wallet/message.ts'
import type { ProposalState, StorageProviderPort } from './provider-port.ts'

/** A block is at most 2 MiB in any CAR we write or read back (UnixFS chunks are 1 MiB). */
const MAX_BLOCK_BYTES = 2 * 1024 * 1024
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

  /**
   * A GET to the provider's HTTP retrieval endpoint. A 5xx or no connection is UNREACHABLE, another
   * answer than 200 is the provider refusing (REFUSED, with its status and the start of its body).
   */
  async function get(provider: string, path: string, accept: string, signal: AbortSignal): Promise<Response> {
    const base = await client.retrievalUrl(provider, signal)
    if (!base) throw new NetworkError('REFUSED', `provider ${provider} serves no HTTP retrieval`, { providerReason: 'no HTTP retrieval transport' })
    let res: Response
    try {
      res = await doFetch(`${base}${path}`, { headers: { Accept: accept }, signal })
    } catch (err) {
      if (signal.aborted) throw timedOut(`provider ${provider} did not answer ${path} in time`, err)
      throw new NetworkError('UNREACHABLE', `provider ${provider} cannot be reached for ${path}: ${(err as Error)?.message ?? err}`, { cause: err })
    }
    if (res.status === 200 && res.body) return res
    const said = res.status === 200 ? '' : (await res.text().catch(() => '')).slice(0, 200)
    if (res.status >= 500) throw new NetworkError('UNREACHABLE', `provider ${provider} answered ${res.status} for ${path}`)
    if (res.status === 200) throw protocolError(`provider ${provider} answered 200 without a body for ${path}`)
    throw new NetworkError('REFUSED', `provider ${provider} answered ${res.status} for ${path}`, { providerReason: said ? `${res.status}: ${said}` : String(res.status) })
  }

  return {
    epochSeconds: chain.clock.epochSeconds,
    chainHead: async () => (await chain.chainHead()).epoch,
    networkVersion: () => chain.networkVersion(),
    idAddress: (address) => chain.lookupId(address),
    async ask(provider, options) {
      const ask = await client.ask(provider, signalOf(options))
      return ask && { price: BigInt(ask.price), verifiedPrice: BigInt(ask.verifiedPrice), minPieceSize: ask.minPieceSize, maxPieceSize: ask.maxPieceSize }
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
      return answer.accepted ? { accepted: true, proposalId: dealUuid, ...sent } : { accepted: false, reason: answer.message || 'REJECTED', ...sent }
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
    async dealOnChain(dealId, head) {
      const deal = await chain.getDeal(dealId)
      return deal ? { ...dealStatus(deal, head), proposal: deal.proposal } : null
    },
    async retrieveBlock(provider, _pieceCid, blockCid, options) {
      const res = await get(provider, `/ipfs/${blockCid}`, 'application/vnd.ipld.raw', signalOf(options))
      const chunks: Uint8Array[] = []
      let size = 0
      for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
        size += chunk.length
        if (size > MAX_BLOCK_BYTES) throw protocolError(`provider ${provider} sent more than a block for ${blockCid}`)
        chunks.push(chunk)
      }
      return new Uint8Array(Buffer.concat(chunks))
    },
    retrievePiece(provider, pieceCid, carSize, options) {
      return (async function* () {
        const res = await get(provider, `/piece/${pieceCid}`, 'application/octet-stream', signalOf(options))
        // The unsealed piece ends in zero padding: the CAR is its first carSize bytes.
        let left = carSize
        for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
          if (left <= 0) break
          const take = chunk.length <= left ? chunk : chunk.subarray(0, left)
          left -= take.length
          yield take
        }
        if (left > 0) throw protocolError(`provider ${provider} ended piece ${pieceCid} early`)
      })()
    },
  }
}
