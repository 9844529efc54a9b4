import { NetworkError, protocolError, timedOut } from './errors.ts'

/** A block is at most 2 MiB in any CAR we write or read back (UnixFS chunks are 1 MiB). */
const MAX_BLOCK_BYTES = 2 * 1024 * 1024

/**
 * A GET to a provider's HTTP retrieval endpoint (booster-http, Curio's
 * market and PDP servers). No connection is UNREACHABLE, as is a 5xx;
 * another answer than 200 is the provider refusing (REFUSED, with its status
 * and the start of its body). `who` names the provider in messages.
 */
export async function retrievalGet(
  url: string,
  accept: string,
  signal: AbortSignal,
  who: string,
  doFetch: typeof fetch = fetch,
): Promise<Response> {
  const path = new URL(url).pathname
  let res: Response
  try {
    res = await doFetch(url, { headers: { Accept: accept }, signal })
  } catch (err) {
    if (signal.aborted) throw timedOut(`provider ${who} did not answer ${path} in time`, err)
    throw new NetworkError('UNREACHABLE', `provider ${who} cannot be reached for ${path}: ${(err as Error)?.message ?? err}`, {
      cause: err,
    })
  }
  if (res.status === 200 && res.body) return res
  const said = res.status === 200 ? '' : (await res.text().catch(() => '')).slice(0, 200)
  if (res.status >= 500) throw new NetworkError('UNREACHABLE', `provider ${who} answered ${res.status} for ${path}`)
  if (res.status === 200) throw protocolError(`provider ${who} answered 200 without a body for ${path}`)
  throw new NetworkError('REFUSED', `provider ${who} answered ${res.status} for ${path}`, {
    providerReason: said ? `${res.status}: ${said}` : String(res.status),
  })
}

/** A raw block's bytes from a retrieval answer (the caller checks them against the CID); more than a block is a protocol error. */
export async function blockBytes(res: Response, who: string, blockCid: string): Promise<Uint8Array> {
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
    size += chunk.length
    if (size > MAX_BLOCK_BYTES) throw protocolError(`provider ${who} sent more than a block for ${blockCid}`)
    chunks.push(chunk)
  }
  return new Uint8Array(Buffer.concat(chunks))
}

/**
 * The first `size` bytes of a piece answer: the CAR, without the zeros a
 * provider pads it with. Fewer is a protocol error.
 */
export async function* pieceHead(res: Response, size: number, who: string): AsyncIterable<Uint8Array> {
  let left = size
  for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
    if (left <= 0) break
    const take = chunk.length <= left ? chunk : chunk.subarray(0, left)
    left -= take.length
    yield take
  }
  if (left > 0) throw protocolError(`provider ${who} ended the piece early`)
}
