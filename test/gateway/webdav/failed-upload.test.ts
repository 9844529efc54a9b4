import { request } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { dav } from './client.ts'
import { startDav, type DavHarness } from './harness.ts'
import { createMemoryContent } from './memory-content.ts'

/** The memory store, plus a promise per ingest so a test knows when the server gave up on a body. */
function watchedContent() {
  const inner = createMemoryContent()
  const settled: Promise<unknown>[] = []
  return {
    settled,
    store: {
      ...inner,
      ingest(source: AsyncIterable<Uint8Array>, options?: { signal?: AbortSignal }) {
        const p = inner.ingest(source, options)
        settled.push(
          p.then(
            () => 'stored',
            () => 'failed',
          ),
        )
        return p
      },
    },
  }
}

const watched = watchedContent()
let h: DavHarness
beforeAll(async () => {
  h = await startDav(watched.store)
  await dav(h.url, 'MKCOL', '/bob')
})
afterAll(() => h.close())

/** Starts a PUT that announces `announced` bytes, sends `sent` of them, then drops the connection. */
async function abortedPut(path: string, headers: Record<string, string>, sent: Buffer): Promise<string> {
  const before = watched.settled.length
  const req = request(h.url + path, { method: 'PUT', headers })
  req.on('error', () => {}) // the connection is cut on purpose
  req.write(sent)
  // Wait until the server is consuming this body, then pull the plug.
  while (watched.settled.length === before) await new Promise((r) => setImmediate(r))
  req.destroy()
  return (await watched.settled[before]) as string
}

describe('failed uploads replace nothing', () => {
  it('keeps the old bytes when a replacing upload is cut off', async () => {
    await dav(h.url, 'PUT', '/bob/report.txt', { body: 'the good version' })
    const etag = (await h.namespace.get('/bob/report.txt'))!.etag

    // Announces 1 MB, sends 100 bytes.
    const outcome = await abortedPut('/bob/report.txt', { 'Content-Length': '1000000' }, Buffer.alloc(100, 'x'))
    expect(outcome).toBe('failed')

    const res = await dav(h.url, 'GET', '/bob/report.txt')
    expect(await res.text()).toBe('the good version')
    expect((await h.namespace.get('/bob/report.txt'))!.etag).toBe(etag)
  })

  it('creates nothing when a new upload is cut off', async () => {
    const outcome = await abortedPut('/bob/new.bin', { 'Content-Length': '500000' }, Buffer.alloc(4096))
    expect(outcome).toBe('failed')
    expect((await dav(h.url, 'HEAD', '/bob/new.bin')).status).toBe(404)
    expect(await h.namespace.get('/bob/new.bin')).toBeUndefined()
  })

  it('creates nothing when a chunked upload is cut off before its last chunk', async () => {
    const outcome = await abortedPut('/bob/chunked.bin', { 'Transfer-Encoding': 'chunked' }, Buffer.alloc(10_000))
    expect(outcome).toBe('failed')
    expect(await h.namespace.get('/bob/chunked.bin')).toBeUndefined()
  })

  it('still serves and accepts uploads afterwards', async () => {
    expect((await dav(h.url, 'PUT', '/bob/after.txt', { body: 'fine' })).status).toBe(201)
    expect(await (await dav(h.url, 'GET', '/bob/after.txt')).text()).toBe('fine')
  })
})
