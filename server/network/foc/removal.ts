import type { Hash } from 'viem'
import { contractReader, type FocContext } from './context.ts'
import type { FocCopy } from './types.ts'

/** Has the copy's provider remove the piece from our data set: the SDK signs the removal (deletePiece), the provider sends it. */
export async function removeCopy(
  { synapse }: Pick<FocContext, 'synapse'>,
  { providerId, dataSetId, pieceId }: Pick<FocCopy, 'providerId' | 'dataSetId' | 'pieceId'>,
): Promise<Hash> {
  const context = await synapse.storage.createContext({ providerId: BigInt(providerId), dataSetId })
  return context.deletePiece({ piece: pieceId })
}

/** Whether the piece is still in its data set, scheduled for removal, or gone, as PDPVerifier says. */
export async function removalState(
  { client, chain }: Pick<FocContext, 'client' | 'chain'>,
  { dataSetId, pieceId }: Pick<FocCopy, 'dataSetId' | 'pieceId'>,
): Promise<'live' | 'scheduled' | 'gone'> {
  const { pdp } = chain.contracts
  const read = contractReader(client)
  const [dataSetLive, pieceLive] = await Promise.all([
    read<boolean>(pdp, 'dataSetLive', [dataSetId]),
    read<boolean>(pdp, 'pieceLive', [dataSetId, pieceId]),
  ])
  if (!dataSetLive || !pieceLive) return 'gone'
  // PDPVerifier refuses to schedule a piece twice ("Piece ID already scheduled for removal"): asked first.
  const scheduled = await read<readonly bigint[]>(pdp, 'getScheduledRemovals', [dataSetId])
  return scheduled.includes(pieceId) ? 'scheduled' : 'live'
}
