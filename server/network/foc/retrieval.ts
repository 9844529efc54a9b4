import { blockBytes, pieceHead, retrievalGet } from '../http-retrieval.ts'

// No context: plain HTTP from the copy's provider, as any client of it fetches; neither the SDK nor the chain is asked.

/** The first `size` bytes of a copy's piece as its provider serves it (`GET <retrievalUrl>`). */
export async function* retrievePiece(retrievalUrl: string, size: number, signal: AbortSignal): AsyncIterable<Uint8Array> {
  const who = new URL(retrievalUrl).host
  yield* pieceHead(await retrievalGet(retrievalUrl, 'application/octet-stream', signal, who), size, who)
}

/** One block of a copy's CAR from its provider's trustless gateway (`GET /ipfs/<cid>`, raw); the caller checks it against its CID. */
export async function retrieveBlock(retrievalUrl: string, blockCid: string, signal: AbortSignal): Promise<Uint8Array> {
  // Curio serves the piece under <serviceURL>/piece/<cid> and its indexed CARs' blocks under <serviceURL>/ipfs/<cid>.
  const base = retrievalUrl.replace(/\/piece\/[^/]+$/, '')
  const who = new URL(retrievalUrl).host
  return blockBytes(await retrievalGet(`${base}/ipfs/${blockCid}?format=raw`, 'application/vnd.ipld.raw', signal, who), who, blockCid)
}
