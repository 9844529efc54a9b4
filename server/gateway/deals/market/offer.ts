import { describePerTiBMonth, perTiBMonth } from '../../../shared/deal-price.ts'
import { padPieceCid, piecePricePerEpoch, unpaddedPieceSize } from '../../../shared/piece.ts'
import type { GroupRecord } from '../../content/index.ts'
import type { RouteContext } from '../types.ts'
import type { StorageProviderPort } from './provider-port.ts'
import type { DealTerms } from './types.ts'

/** The piece as one provider is offered it. */
export interface Offer {
  pieceCid: string
  pieceSize: number
  /** What the provider downloads: the CAR, then zeros up to the unpadded piece size. */
  transferSize: number
  pricePerEpoch: bigint
  /** The price per GiB per epoch it was worked out from: DEAL_PRICE, or the provider's own ask under a ceiling. */
  pricePerGiBEpoch: bigint
}

/**
 * The piece as this provider would take it, or why it would not. Its ask
 * gives the piece sizes and prices it takes: a piece below its minimum is
 * padded with zeros up to it (the transfer too, so that what it downloads
 * is exactly the proposed piece: Curio refuses a PieceSize that is not the
 * natural size of the transfer, curio market/mk12/mk12.go), within
 * `maxPaddingFactor`, since DataCap and price are paid on the padded size.
 * A provider that serves no HTTP retrieval could never be checked or read
 * back, so the group could never be offloaded: it is not asked.
 *
 * Under a price ceiling (`ceiling`, attoFIL per TiB-month, DEAL_MAX_PRICE_PER_TIB_MONTH)
 * an unverified deal pays the provider's own ask for unverified deals (a storage ask's
 * Price, attoFIL per GiB per epoch: boost storagemarket/storedask/storedask.go), never
 * more; a provider asking more than the ceiling, or whose ask cannot be read, is not
 * offered the group.
 */
export async function offerFor(
  c: Pick<RouteContext, 'withTimeout'>,
  o: { providers: StorageProviderPort; terms: DealTerms },
  g: GroupRecord,
  provider: string,
  verified: boolean,
  ceiling?: bigint,
): Promise<Offer | { refused: string }> {
  const { providers, terms } = o
  const pieceSize = g.pieceSize!
  const ask = await c.withTimeout((signal) => providers.ask(provider, { signal })).catch(() => null)
  let target = pieceSize
  if (ask) {
    if (pieceSize > ask.maxPieceSize) return { refused: `takes pieces of at most ${ask.maxPieceSize} bytes` }
    while (target < ask.minPieceSize) target *= 2
    if (target / pieceSize > terms.maxPaddingFactor) {
      return {
        refused: `takes pieces of at least ${ask.minPieceSize} bytes; this one is ${pieceSize} (padding it ×${target / pieceSize} is over DEAL_MAX_PADDING ${terms.maxPaddingFactor})`,
      }
    }
  }
  let pricePerGiBEpoch = BigInt(terms.pricePerGiBEpoch)
  if (!verified && ceiling !== undefined) {
    if (!ask) return { refused: 'did not say its ask, so there is no price to propose under DEAL_MAX_PRICE_PER_TIB_MONTH' }
    if (perTiBMonth(ask.price) > ceiling) {
      return {
        refused: `asks ${describePerTiBMonth(perTiBMonth(ask.price))}, more than DEAL_MAX_PRICE_PER_TIB_MONTH (${describePerTiBMonth(ceiling)})`,
      }
    }
    pricePerGiBEpoch = ask.price
  }
  const pricePerEpoch = piecePricePerEpoch(pricePerGiBEpoch, target)
  if (ask) {
    // The check Boost and Curio make (boost storagemarket/deal_acceptance.go): our price for the piece against their ask for it.
    const asked = piecePricePerEpoch(verified ? ask.verifiedPrice : ask.price, target)
    if (pricePerEpoch < asked) return { refused: `asks ${asked} attoFIL per epoch for this piece, ${pricePerEpoch} offered (DEAL_PRICE)` }
  }
  const http = await c.withTimeout((signal) => providers.servesHttpRetrieval(provider, { signal })).catch(() => undefined)
  if (http === false)
    return { refused: 'serves no HTTP retrieval, so its copy could never be checked or read back and the local copy would have to stay' }
  return {
    pieceCid: target === pieceSize ? g.pieceCid! : padPieceCid(g.pieceCid!, pieceSize, target),
    pieceSize: target,
    transferSize: target === pieceSize ? g.carSize! : unpaddedPieceSize(target),
    pricePerEpoch,
    pricePerGiBEpoch,
  }
}
