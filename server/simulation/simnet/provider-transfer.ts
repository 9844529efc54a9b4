/**
 * How a simulated provider pulls a deal's CAR from the client over HTTP,
 * the way each real implementation does it, so that a client serving its
 * transfers wrongly fails here as it would on the network. Bytes go to
 * `write(position, bytes)`; a failure is a TransferFailure naming what went
 * wrong (the provider reports it as the deal's error).
 */

export class TransferFailure extends Error {
  override name = 'TransferFailure'
}

export interface TransferRequest {
  url: string
  headers: Record<string, string>
  /** Transfer.Size from the deal params. */
  size: number
}

export interface TransferIo {
  fetch: typeof fetch
  signal: AbortSignal
  write(position: number, bytes: Uint8Array): Promise<void>
  /** Pause between attempts (real: seconds; tests: milliseconds). */
  retryDelayMs: number
}

const MiB = 1024 * 1024
/** boost transport/httptransport/http_transport.go: numChunks = 5, and one chunk below 10 × readBufferSize (1 MiB). */
export const BOOST_CHUNKS = 5
export const BOOST_SINGLE_CHUNK_BELOW = 10 * MiB
/** boost http_transport.go maxReconnectAttempts (15); curio lib/robusthttp/robusthttp.go maxRetryCount (15). */
const MAX_ATTEMPTS = 15

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason)
    const t = setTimeout(resolve, ms)
    signal.addEventListener('abort', () => (clearTimeout(t), reject(signal.reason)), { once: true })
  })

class HttpStatusError extends TransferFailure {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message)
  }
}

/**
 * Boost (transport/httptransport/http_transport.go execute, http_downloader.go doHttp):
 * a HEAD first, which must answer 200 with a Content-Length equal to the
 * deal's transfer size; then the size split in 5 chunks (one below 10 MiB),
 * each fetched with `Range: bytes=<start>-<end>` where end is the chunk's
 * exclusive end (Boost writes it so, one past an inclusive range) and only
 * end−start bytes are read. A 200 is taken like a 206: Boost then keeps the
 * first bytes of the whole body as that chunk, so a server ignoring Range
 * corrupts every chunk but the first (the CommP check then fails). A 4xx
 * ends the transfer; other errors resume each chunk where it stopped, after
 * a back-off. In the end the bytes received must equal the deal size.
 */
export async function boostTransfer(t: TransferRequest, io: TransferIo): Promise<void> {
  const head = await io.fetch(t.url, { method: 'HEAD', headers: t.headers, signal: io.signal })
  await head.body?.cancel()
  if (head.status !== 200) throw new HttpStatusError(head.status, `http HEAD req failed: code: ${head.status}`)
  const length = head.headers.get('content-length')
  if (!length) throw new TransferFailure("can't determine deal size from the head request, no header")
  const dealSize = Number(length)
  if (dealSize !== t.size) throw new TransferFailure(`deal size mismatch: head: ${dealSize}, dealInfo: ${t.size}`)

  const chunks = dealSize < BOOST_SINGLE_CHUNK_BELOW ? 1 : BOOST_CHUNKS
  const chunkSize = Math.floor(dealSize / chunks)
  const parts = Array.from({ length: chunks }, (_, i) => ({
    start: i * chunkSize,
    end: i === chunks - 1 ? dealSize : (i + 1) * chunkSize,
    received: 0,
  }))

  for (let attempt = 1; ; attempt++) {
    const results = await Promise.allSettled(parts.map((p) => boostChunk(t, io, p)))
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')
    if (!failed) break
    const err = failed.reason
    if (err instanceof HttpStatusError && Math.floor(err.code / 100) === 4) throw err
    if (io.signal.aborted) throw io.signal.reason
    if (attempt >= MAX_ATTEMPTS)
      throw new TransferFailure(`could not finish transfer even after ${attempt} attempts, lastErr: ${(err as Error).message}`)
    await sleep(io.retryDelayMs, io.signal)
  }
  const received = parts.reduce((n, p) => n + p.received, 0)
  if (received !== dealSize) throw new TransferFailure(`mismatch in dealSize vs received bytes, dealSize=${dealSize}, received=${received}`)
}

async function boostChunk(t: TransferRequest, io: TransferIo, part: { start: number; end: number; received: number }): Promise<void> {
  const from = part.start + part.received
  if (from >= part.end) return
  const toRead = part.end - from
  const res = await io.fetch(t.url, { headers: { ...t.headers, Range: `bytes=${from}-${part.end}` }, signal: io.signal })
  if (res.status !== 200 && res.status !== 206) {
    await res.body?.cancel()
    throw new HttpStatusError(res.status, `http req failed: code: ${res.status}`)
  }
  if (!res.body) return
  let read = 0
  // io.LimitReader(resp.Body, toRead): the rest of the body is left unread.
  for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
    const take = chunk.subarray(0, Math.min(chunk.length, toRead - read))
    await io.write(from + read, take)
    read += take.length
    part.received += take.length
    if (read >= toRead) break
  }
}

/**
 * Curio (lib/robusthttp/robusthttp.go): one GET that always carries
 * `Range: bytes=<offset>-<size−1>`; when the connection breaks, a new
 * request resumes from the byte it stopped at. A 200 is fine only at offset
 * 0; on a resumed request it is "server ignored range header". Any status
 * other than 200/206 is an error; failed requests are retried after a pause,
 * up to 15 times in all.
 */
export async function curioTransfer(t: TransferRequest, io: TransferIo): Promise<void> {
  let offset = 0
  let lastErr = ''
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    if (io.signal.aborted) throw io.signal.reason
    let res: Response
    try {
      res = await io.fetch(t.url, { headers: { ...t.headers, Range: `bytes=${offset}-${t.size - 1}` }, signal: io.signal })
    } catch (err) {
      if (io.signal.aborted) throw io.signal.reason
      lastErr = `do request: ${(err as Error).message}`
      await sleep(io.retryDelayMs, io.signal)
      continue
    }
    if (res.status === 200 && offset > 0) {
      await res.body?.cancel()
      lastErr = 'server ignored range header (got 200 OK, expected 206 Partial Content)'
      await sleep(io.retryDelayMs, io.signal)
      continue
    }
    if (res.status !== 200 && res.status !== 206) {
      await res.body?.cancel()
      lastErr = `http status: ${res.status}`
      await sleep(io.retryDelayMs, io.signal)
      continue
    }
    try {
      for await (const chunk of (res.body ?? []) as AsyncIterable<Uint8Array>) {
        if (offset + chunk.length > t.size) throw new TransferFailure(`received more than the transfer size ${t.size}`)
        await io.write(offset, chunk)
        offset += chunk.length
      }
    } catch (err) {
      if (err instanceof TransferFailure) throw err
      if (io.signal.aborted) throw io.signal.reason
      // The read broke off: retry at once from where it stopped, as robusthttp's Read does.
      lastErr = (err as Error).message
      continue
    }
    if (offset !== t.size) throw new TransferFailure(`transfer ended at ${offset} of ${t.size} bytes`)
    return
  }
  throw new TransferFailure(`http read failed after ${MAX_ATTEMPTS} retries: lastErr: ${lastErr}`)
}
