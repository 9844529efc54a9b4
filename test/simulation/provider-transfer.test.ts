import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { randomBytes } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { boostTransfer, curioTransfer, TransferFailure } from '../../server/simulation/simnet/provider-transfer.ts'

/** How the test's HTTP server answers; every request is recorded. */
interface Behaviour {
  /** Content-Length the HEAD announces (default: the real size). */
  headLength?: number
  /** Answer 200 with the whole body whatever Range says. */
  ignoreRange?: boolean
  /** Cut the connection after this many body bytes of the first GET. */
  cutFirstGetAfter?: number
  status?: number
}

let server: Server | undefined
afterEach(async () => {
  if (server) await new Promise((r) => server!.close(r))
  server = undefined
})

async function serve(data: Uint8Array, b: Behaviour) {
  const requests: { method: string; range: string | undefined }[] = []
  let gets = 0
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    requests.push({ method: req.method!, range: req.headers.range })
    if (b.status) return void res.writeHead(b.status).end()
    if (req.method === 'HEAD') return void res.writeHead(200, { 'Content-Length': b.headLength ?? data.length }).end()
    gets++
    let body = data
    let status = 200
    const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '')
    if (m && !b.ignoreRange) {
      const start = Number(m[1])
      const end = Math.min(Number(m[2]), data.length - 1)
      body = data.subarray(start, end + 1)
      status = 206
    }
    res.writeHead(status, { 'Content-Length': body.length })
    if (gets === 1 && b.cutFirstGetAfter !== undefined) {
      res.write(body.subarray(0, b.cutFirstGetAfter), () => setTimeout(() => res.socket?.destroy(), 20))
      return
    }
    res.end(body)
  })
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r))
  return { url: `http://127.0.0.1:${(server!.address() as { port: number }).port}/car`, requests }
}

function sink(size: number) {
  const out = new Uint8Array(size)
  return {
    out,
    io: {
      fetch,
      signal: AbortSignal.timeout(20_000),
      retryDelayMs: 5,
      async write(position: number, bytes: Uint8Array) {
        if (position + bytes.length > size) throw new Error('write past the end')
        out.set(bytes, position)
      },
    },
  }
}

const MiB = 1024 * 1024

describe('Boost-like transfer (boost transport/httptransport)', () => {
  it('asks HEAD first and gives up when its Content-Length is not the deal’s transfer size', async () => {
    const data = randomBytes(5000)
    const { url, requests } = await serve(data, { headLength: 4999 })
    const { io } = sink(data.length)
    await expect(boostTransfer({ url, headers: {}, size: data.length }, io)).rejects.toThrow(
      'deal size mismatch: head: 4999, dealInfo: 5000',
    )
    expect(requests).toEqual([{ method: 'HEAD', range: undefined }])
  })

  it('fetches 10 MiB or more as 5 ranged requests, each range ending one past its chunk', async () => {
    const data = randomBytes(10 * MiB + 3)
    const { url, requests } = await serve(data, {})
    const { io, out } = sink(data.length)
    await boostTransfer({ url, headers: {}, size: data.length }, io)
    expect(Buffer.from(out).equals(data)).toBe(true)
    const chunk = Math.floor(data.length / 5)
    expect(requests[0].method).toBe('HEAD')
    expect(
      requests
        .slice(1)
        .map((r) => r.range)
        .sort(),
    ).toEqual([0, 1, 2, 3, 4].map((i) => `bytes=${i * chunk}-${i === 4 ? data.length : (i + 1) * chunk}`).sort())
  })

  it('fetches less than 10 MiB in one request (still with a Range header)', async () => {
    const data = randomBytes(10 * MiB - 1)
    const { url, requests } = await serve(data, {})
    const { io, out } = sink(data.length)
    await boostTransfer({ url, headers: {}, size: data.length }, io)
    expect(Buffer.from(out).equals(data)).toBe(true)
    expect(requests.map((r) => r.range)).toEqual([undefined, `bytes=0-${data.length}`])
  })

  it('takes a 200 to a ranged request as its chunk: from a server that ignores Range it assembles the wrong bytes', async () => {
    const data = randomBytes(10 * MiB)
    const { url } = await serve(data, { ignoreRange: true })
    const { io, out } = sink(data.length)
    await boostTransfer({ url, headers: {}, size: data.length }, io)
    const chunk = data.length / 5
    // The first chunk is right; the second holds the start of the file again (the piece CID check then fails).
    expect(Buffer.from(out.subarray(0, chunk)).equals(data.subarray(0, chunk))).toBe(true)
    expect(Buffer.from(out.subarray(chunk, 2 * chunk)).equals(data.subarray(0, chunk))).toBe(true)
    expect(Buffer.from(out).equals(data)).toBe(false)
  })

  it('stops at a 4xx without retrying', async () => {
    const { url, requests } = await serve(randomBytes(100), { status: 403 })
    const { io } = sink(100)
    await expect(boostTransfer({ url, headers: {}, size: 100 }, io)).rejects.toThrow(/code: 403/)
    expect(requests).toHaveLength(1)
  })

  it('resumes a chunk whose connection broke, from the byte it stopped at', async () => {
    const data = randomBytes(300_000)
    const { url, requests } = await serve(data, { cutFirstGetAfter: 100_000 })
    const { io, out } = sink(data.length)
    await boostTransfer({ url, headers: {}, size: data.length }, io)
    expect(Buffer.from(out).equals(data)).toBe(true)
    expect(requests.map((r) => r.range)).toEqual([undefined, `bytes=0-${data.length}`, `bytes=100000-${data.length}`])
  })
})

describe('Curio-like transfer (curio lib/robusthttp)', () => {
  it('always sends Range, and resumes an interrupted download with a new Range from where it stopped', async () => {
    const data = randomBytes(300_000)
    const { url, requests } = await serve(data, { cutFirstGetAfter: 120_000 })
    const { io, out } = sink(data.length)
    await curioTransfer({ url, headers: {}, size: data.length }, io)
    expect(Buffer.from(out).equals(data)).toBe(true)
    expect(requests).toEqual([
      { method: 'GET', range: `bytes=0-${data.length - 1}` },
      { method: 'GET', range: `bytes=120000-${data.length - 1}` },
    ])
  })

  it('fails with "server ignored range header" when a resumed request gets a 200', async () => {
    const data = randomBytes(300_000)
    const { url } = await serve(data, { ignoreRange: true, cutFirstGetAfter: 120_000 })
    const { io } = sink(data.length)
    const failure = curioTransfer({ url, headers: {}, size: data.length }, io)
    await expect(failure).rejects.toBeInstanceOf(TransferFailure)
    await expect(failure).rejects.toThrow('server ignored range header')
  })

  it('takes a 200 to its first request (offset 0), as robusthttp does', async () => {
    const data = randomBytes(50_000)
    const { url } = await serve(data, { ignoreRange: true })
    const { io, out } = sink(data.length)
    await curioTransfer({ url, headers: {}, size: data.length }, io)
    expect(Buffer.from(out).equals(data)).toBe(true)
  })

  it('never sends HEAD', async () => {
    const data = randomBytes(1000)
    const { url, requests } = await serve(data, { headLength: 1 })
    await curioTransfer({ url, headers: {}, size: data.length }, sink(data.length).io)
    expect(requests.map((r) => r.method)).toEqual(['GET'])
  })
})
