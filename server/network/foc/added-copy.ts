import * as Piece from '@filoz/synapse-core/piece'
import { getPDPProvider } from '@filoz/synapse-core/sp-registry'
import { createPieceUrlPDP } from '@filoz/synapse-core/utils'
import { isAddressEqual, toHex, TransactionReceiptNotFoundError, type Hash } from 'viem'
import { NetworkError } from '../errors.ts'
import { fwssViewAbi, pdpVerifierAbi } from './abi.ts'
import { contractReader, type FocContext } from './context.ts'
import type { FocAddOutcome } from './types.ts'

/** Matching piece ids asked for per data set: ours hold a piece once, or a few times while older copies are being removed. */
const MATCHES = 64n

/**
 * The copy an add transaction made of `pieceCid` (a v2 piece CID) on
 * `providerId`. The transaction's receipt says only whether it went
 * through, to PDPVerifier; the copy itself is found among the pieces of the payer's data
 * sets with that provider (PDPVerifier 3.4.0 `findPieceIdsByCid`,
 * src/PDPVerifier.sol), not from the receipt's events: PDPVerifier 3.5.0
 * emits PiecesAddedV2 instead of PiecesAdded, and an event this client
 * does not know must not make it upload again. Of several live pieces
 * with that CID (an older copy still being removed), the latest added.
 * The retrieval URL is built from the provider's service URL in the registry.
 */
export async function addedCopy(
  { client, chain, payer }: Pick<FocContext, 'client' | 'chain' | 'payer'>,
  { txHash, providerId, pieceCid }: { txHash: Hash; providerId: number; pieceCid: string },
): Promise<FocAddOutcome> {
  const receipt = await client.getTransactionReceipt({ hash: txHash }).catch((error: unknown) => {
    if (error instanceof TransactionReceiptNotFoundError) return null
    throw error
  })
  if (!receipt) return { status: 'pending' }
  // The add is the provider's call to PDPVerifier (addPieces, or a data set's creation with its first pieces).
  if (receipt.status !== 'success' || !receipt.to || !isAddressEqual(receipt.to, chain.contracts.pdp.address)) return { status: 'failed' }
  const found = await findPiece({ client, chain, payer }, providerId, pieceCid)
  if (!found) return { status: 'failed' }
  const provider = await getPDPProvider(client, { providerId: BigInt(providerId) })
  if (!provider) throw new NetworkError('PROTOCOL_ERROR', `PDP provider ${providerId} is not in the registry`)
  return {
    status: 'added',
    copy: {
      providerId,
      ...found,
      addedEpoch: Number(receipt.blockNumber),
      retrievalUrl: createPieceUrlPDP({ cid: pieceCid, serviceURL: provider.pdp.serviceURL }),
    },
  }
}

/** The latest live piece `pieceCid` in the payer's live data sets with the provider (the payer's data sets read through GA's 13-field view). */
async function findPiece(
  { client, chain, payer }: Pick<FocContext, 'client' | 'chain' | 'payer'>,
  providerId: number,
  pieceCid: string,
): Promise<{ dataSetId: bigint; pieceId: bigint } | undefined> {
  const { pdp, fwssView } = chain.contracts
  const read = contractReader(client)
  const dataSets = await read<readonly { providerId: bigint; dataSetId: bigint }[]>(
    { address: fwssView.address, abi: fwssViewAbi },
    'getClientDataSets',
    [payer],
  )
  const verifier = { address: pdp.address, abi: pdpVerifierAbi }
  const cid = { data: toHex(Piece.parse(pieceCid).bytes) }
  // The newest data set first: a piece added just now is in the one the SDK picked last, if it is in two.
  const ours = dataSets.filter((d) => d.providerId === BigInt(providerId)).sort((a, b) => (a.dataSetId < b.dataSetId ? 1 : -1))
  for (const { dataSetId } of ours) {
    if (!(await read<boolean>(verifier, 'dataSetLive', [dataSetId]))) continue
    const pieceId = (await read<readonly bigint[]>(verifier, 'findPieceIdsByCid', [dataSetId, cid, 0n, MATCHES])).at(-1)
    if (pieceId !== undefined) return { dataSetId, pieceId }
  }
  return undefined
}
