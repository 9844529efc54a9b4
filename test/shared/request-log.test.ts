import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { request, type IncomingMessage, type ServerResponse } from 'node:http'
import { pipeline, Writable } from 'node:stream'
import { pino } from 'pino'
import { startServer, type RunningServer } from '../../server/shared/http.ts'
import { logWhenDone, redactUrl } from '../../server/shared/request-log.ts'

/** A server for the suite: every request logged by `logWhenDone` into `lines`, then answered by `respond`. */
function loggedServer(respond: (req: IncomingMessage, res: ServerResponse) => void, level = 'info') {
  const lines: Record<string, any>[] = []
  const logger = pino({ level }, { write: (line: string) => void lines.push(JSON.parse(line)) })
  const t = { lines, server: undefined as unknown as RunningServer }
  beforeAll(async () => {
    t.server = await startServer((req, res) => {
      logWhenDone(logger, req, res, () => ({}))
      respond(req, res)
    }, 0)
  })
  afterAll(() => t.server.close(100))
  return t
}

/**
 * A body reader that fails half-way (a block write that fails, an upload
 * folder deleted under a chunk PUT) destroys the request, and Node then sets
 * `req.socket` to null. The request log and the server's own bookkeeping run
 * after that and must not read it (it once ended the whole process).
 */
describe('request log when a body reader fails half-way', () => {
  const t = loggedServer((req, res) => {
    let chunks = 0
    const failingStore = new Writable({ write: (_chunk, _enc, done) => done(++chunks > 1 ? new Error('disk write failed') : null) })
    pipeline(req, failingStore, () => {
      res.writeHead(500, { 'content-type': 'text/plain' }).end('write failed')
    })
  })

  const put = () =>
    new Promise<number>((resolve, reject) => {
      const req = request({ port: t.server.port, host: '127.0.0.1', method: 'PUT', path: '/upload' }, (res) => {
        res.resume()
        resolve(res.statusCode ?? 0)
      })
      req.on('error', reject)
      let sent = 0
      const pump = () => {
        while (sent++ < 8) if (!req.write(Buffer.alloc(64 * 1024))) return void req.once('drain', pump)
        req.end()
      }
      pump()
    })

  it('answers, logs the client address, and keeps serving', async () => {
    expect(await put()).toBe(500)
    expect(await put()).toBe(500)
    await new Promise((r) => setTimeout(r, 50))
    const logged = t.lines.filter((l) => l.req?.url === '/upload')
    expect(logged.length).toBe(2)
    expect(logged[0].req.remoteAddress).toBe('127.0.0.1')
  })
})

describe('request log and secrets in URLs', () => {
  const t = loggedServer((_req, res) => res.end('ok'), 'debug')

  it('logs the path and harmless parameters as sent, never the values of keys, tokens or passwords', async () => {
    await (
      await fetch(
        `${t.server.url}/private/v1/deals?apiKey=fgs_s3cret&page=2&access_token=tok123&X-Amz-Signature=abc&Password=hunter2&q=cat`,
      )
    ).text()
    const url = t.lines.at(-1)!.req.url as string
    expect(url).toBe(
      '/private/v1/deals?apiKey=[redacted]&page=2&access_token=[redacted]&X-Amz-Signature=[redacted]&Password=[redacted]&q=cat',
    )
    expect(JSON.stringify(t.lines)).not.toMatch(/fgs_s3cret|tok123|hunter2/)
  })

  it('redacts a parameter whose name is percent-encoded, and leaves a URL without a query alone', async () => {
    expect(redactUrl('/a?api%4Bey=1&%ZZ=2')).toBe('/a?api%4Bey=[redacted]&%ZZ=2')
    expect(redactUrl('/remote.php/dav/files/alice/token.txt')).toBe('/remote.php/dav/files/alice/token.txt')
  })
})

describe('request log levels', () => {
  const at = (level: string) =>
    loggedServer((req, res) => {
      res.statusCode = Number(req.url!.slice(1))
      res.end()
    }, level)
  const info = at('info')
  const debug = at('debug')
  const get = async (t: { server: RunningServer }, status: number) => (await fetch(`${t.server.url}/${status}`)).status

  it('keeps answered requests (a tab polling its record) out of the info log, and refusals and errors in it', async () => {
    for (const status of [200, 204, 304, 400, 401, 429, 500]) expect(await get(info, status)).toBe(status)
    await new Promise((r) => setTimeout(r, 50))
    expect(info.lines.map((l) => [l.res.statusCode, l.level])).toEqual([
      [400, 30],
      [401, 30],
      [429, 30],
      [500, 50],
    ])
  })

  it('keeps out of the info log the refusals sync clients meet every day: MKCOL of a folder that is there, a lookup of a missing path', async () => {
    expect((await fetch(`${info.server.url}/405`, { method: 'MKCOL' })).status).toBe(405)
    for (const status of [404, 412]) await get(info, status)
    await new Promise((r) => setTimeout(r, 50))
    expect(info.lines.filter((l) => [404, 405, 412].includes(l.res.statusCode))).toEqual([])
  })

  it('writes every request at debug', async () => {
    for (const status of [200, 404, 401]) await get(debug, status)
    await new Promise((r) => setTimeout(r, 50))
    expect(debug.lines.map((l) => [l.res.statusCode, l.level])).toEqual([
      [200, 20],
      [404, 20],
      [401, 30],
    ])
  })
})
