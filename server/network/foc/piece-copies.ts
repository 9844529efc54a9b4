import * as Piece from '@filoz/synapse-core/piece'
import { getPDPProvider } from '@filoz/synapse-core/sp-registry'
import { createPieceUrlPDP } from '@filoz/synapse-core/utils'
import { toHex } from 'viem'
import { NetworkError } from '../errors.ts'
import { fwssViewAbi, pdpVerifierAbi } from './abi.ts'
import { contractReader, contractSnapshot, type FocContext } from './context.ts'
import type { FocCopy } from './types.ts'

/** Matching piece ids asked for per data set: ours hold a piece once, or a few times when an add landed twice. */
const MATCHES = 64n

/**
 * Every live copy of `pieceCid` (a v2 piece CID) in the payer's live data
 * sets, on any provider: the pieces PDPVerifier 3.4.0 finds by that CID
 * (`findPieceIdsByCid`, src/PDPVerifier.sol), less those already scheduled
 * for removal (`getScheduledRemovals`), each data set read as one Multicall3
 * snapshot. What a gateway that stopped mid-add looks up to learn which adds
 * went through, whatever it recorded. The chain keeps no epoch per piece:
 * `addedEpoch` is the head the lookup was made at (a proof after it still
 * covers the piece). The retrieval URL is built from the provider's service
 * URL in the registry.
 */
export async function pieceCopies(
  { client, chain, payer }: Pick<FocContext, 'client' | 'chain' | 'payer'>,
  { pieceCid }: { pieceCid: string },
): Promise<FocCopy[]> {
  const { pdp, fwssView } = chain.contracts
  const verifier = { address: pdp.address, abi: pdpVerifierAbi }
  const head = Number(await client.getBlockNumber({ cacheTime: 0 }))
  const dataSets = await contractReader(client)<readonly { providerId: bigint; dataSetId: bigint }[]>(
    { address: fwssView.address, abi: fwssViewAbi },
    'getClientDataSets',
    [payer],
  )
  const cid = { data: toHex(Piece.parse(pieceCid).bytes) }
  const snapshot = contractSnapshot(client)
  const found: Omit<FocCopy, 'retrievalUrl'>[] = []
  for (const { providerId, dataSetId } of dataSets) {
    const [live, ids = [], scheduled = []] = (await snapshot(
      [verifier, 'dataSetLive', [dataSetId]],
      [verifier, 'findPieceIdsByCid', [dataSetId, cid, 0n, MATCHES]],
      [verifier, 'getScheduledRemovals', [dataSetId]],
    )) as [boolean | undefined, readonly bigint[] | undefined, readonly bigint[] | undefined]
    if (!live) continue
    for (const pieceId of ids) {
      if (!scheduled.includes(pieceId)) found.push({ providerId: Number(providerId), dataSetId, pieceId, addedEpoch: head })
    }
  }
  const urls = new Map<number, string>()
  for (const providerId of new Set(found.map((f) => f.providerId))) {
    const provider = await getPDPProvider(client, { providerId: BigInt(providerId) })
    if (!provider) throw new NetworkError('PROTOCOL_ERROR', `PDP provider ${providerId} is not in the registry`)
    urls.set(providerId, createPieceUrlPDP({ cid: pieceCid, serviceURL: provider.pdp.serviceURL }))
  }
  return found.map((f) => ({ ...f, retrievalUrl: urls.get(f.providerId)! }))
}
