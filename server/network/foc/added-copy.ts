import * as Piece from '@filoz/synapse-core/piece'
import { getPDPProvider } from '@filoz/synapse-core/sp-registry'
import { createPieceUrlPDP } from '@filoz/synapse-core/utils'
import { isAddressEqual, parseEventLogs, toHex, TransactionReceiptNotFoundError, type Hash } from 'viem'
import { NetworkError } from '../errors.ts'
import type { FocContext } from './context.ts'
import type { FocAddOutcome } from './types.ts'

/**
 * The copy an add transaction made of `pieceCid` (a v2 piece CID) on
 * `providerId`, from PDPVerifier's PiecesAdded event in its receipt; its
 * retrieval URL from the provider's service URL in the registry.
 */
export async function addedCopy(
  { client, chain }: Pick<FocContext, 'client' | 'chain'>,
  { txHash, providerId, pieceCid }: { txHash: Hash; providerId: number; pieceCid: string },
): Promise<FocAddOutcome> {
  const { pdp } = chain.contracts
  const receipt = await client.getTransactionReceipt({ hash: txHash }).catch((error: unknown) => {
    if (error instanceof TransactionReceiptNotFoundError) return null
    throw error
  })
  if (!receipt) return { status: 'pending' }
  if (receipt.status !== 'success') return { status: 'failed' }
  const wanted = toHex(Piece.parse(pieceCid).bytes)
  for (const added of parseEventLogs({ abi: pdp.abi, logs: receipt.logs, eventName: 'PiecesAdded' })) {
    if (!isAddressEqual(added.address, pdp.address)) continue
    const at = added.args.pieceCids.findIndex((cid) => cid.data.toLowerCase() === wanted)
    if (at < 0) continue
    const provider = await getPDPProvider(client, { providerId: BigInt(providerId) })
    if (!provider) throw new NetworkError('PROTOCOL_ERROR', `PDP provider ${providerId} is not in the registry`)
    return {
      status: 'added',
      copy: {
        providerId,
        dataSetId: added.args.setId,
        pieceId: added.args.pieceIds[at],
        addedEpoch: Number(receipt.blockNumber),
        retrievalUrl: createPieceUrlPDP({ cid: pieceCid, serviceURL: provider.pdp.serviceURL }),
      },
    }
  }
  return { status: 'failed' }
}
