import type { Simnet } from './index.ts'
import { decodeAskRequest, encodeAskResponse, encodeStorageAsk, signSecp256k1 } from './provider-wire.ts'

/**
 * A provider's answer to an ask request: its storage ask, signed by its
 * worker key (boost lp2pimpl/net.go handleNewAskStream, curio
 * market/libp2p/libp2p.go handleNewAskStream).
 */
export function askResponder(o: { simnet: Simnet; providerId: string; workerKey: Uint8Array }): (message: unknown) => Promise<Uint8Array> {
  const { simnet, providerId, workerKey } = o
  return async (message) => {
    const miner = decodeAskRequest(message)
    const terms = miner === providerId ? await simnet.providerTerms(providerId) : null
    // Boost answers a nil ask for another miner's address.
    if (!terms) return encodeAskResponse(null)
    const head = simnet.headEpoch()
    const ask = {
      price: BigInt(terms.unverifiedPrice),
      verifiedPrice: BigInt(terms.verifiedPrice),
      minPieceSize: terms.minPieceSize,
      maxPieceSize: terms.maxPieceSize,
      miner: providerId,
      timestamp: head,
      expiry: head + 2880,
      seqNo: 0,
    }
    return encodeAskResponse({ ask, signature: signSecp256k1(workerKey, encodeStorageAsk(ask)) })
  }
}
