import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { request } from 'node:http'
import { connect } from 'node:net'
import { gzipSync } from 'node:zlib'
import { describeParserError } from '../../server/shared/errors.ts'
import { isJsonContentType, readJsonBody } from '../../server/shared/json-body.ts'
import { startServer, type RunningServer } from '../../server/shared/http.ts'

const LIMIT = 1024

/** Echoes what readJsonBody made of the body, or the error as describeParserError maps it. */
async function echo(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) {
  try {
    if (!isJsonContentType(req.headers['content-type'])) throw Object.assign(new Error('type'), { status: 400, type: 'not.json' })
    const body = await readJsonBody(req, { limit: LIMIT })
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ body: body ?? null }))
  } catch (err) {
    const mapped = describeParserError(err)
    res.writeHead(mapped?.status ?? 500, { 'content-type': 'application/json' }).end(JSON.stringify({ code: mapped?.code }))
  }
}

let server: RunningServer
beforeAll(async () => {
  server = await startServer((req, res) => void echo(req, res), 0)
})
afterAll(() => server.close())

function post(body: Buffer | string | Buffer[], headers: Record<string, string> = {}): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const chunked = Array.isArray(body)
    const req = request(server.url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => (text += c))
      res.on('end', () => resolve({ status: res.statusCode!, json: JSON.parse(text) }))
    })
    // The server may answer 413 before reading everything and close: that is not a client failure here.
    req.on('error', (err) =>
      (err as NodeJS.ErrnoException).code === 'EPIPE' || (err as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(err),
    )
    if (chunked) for (const part of body) req.write(part)
    else req.setHeader('content-length', Buffer.byteLength(body)).write(body)
    req.end()
  })
}

describe('readJsonBody', () => {
  it('parses a UTF-8 JSON body, with or without a byte order mark', async () => {
    expect(await post('{"filePath":"/Фото/日本 €.png"}')).toEqual({ status: 200, json: { body: { filePath: '/Фото/日本 €.png' } } })
    expect((await post(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}')]))).json).toEqual({ body: { a: 1 } })
  })

  it('reads a body sent in chunks without a length', async () => {
    expect(await post([Buffer.from('{"a":'), Buffer.from('[1,2]}')])).toEqual({ status: 200, json: { body: { a: [1, 2] } } })
  })

  it('reads an empty body as undefined', async () => {
    expect(await post('')).toEqual({ status: 200, json: { body: null } })
  })

  it('refuses a declared length over the limit before reading it', async () => {
    expect(await post('x'.repeat(LIMIT + 1))).toEqual({ status: 413, json: { code: 'BODY_TOO_LARGE' } })
  })

  it('refuses a chunked body once it passes the limit', async () => {
    const parts = Array.from({ length: 8 }, () => Buffer.from(`"${'y'.repeat(254)}"`))
    expect(await post(parts)).toEqual({ status: 413, json: { code: 'BODY_TOO_LARGE' } })
  })

  it('refuses broken JSON and invalid UTF-8 with 400', async () => {
    expect(await post('{"filePath": ')).toEqual({ status: 400, json: { code: 'INVALID_JSON' } })
    expect(await post(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d]))).toEqual({
      status: 400,
      json: { code: 'INVALID_ENCODING' },
    })
  })

  it('refuses compressed bodies and charsets other than UTF-8 with 415', async () => {
    expect(await post(gzipSync('{"a":1}'), { 'content-encoding': 'gzip' })).toEqual({ status: 415, json: { code: 'UNSUPPORTED_ENCODING' } })
    expect(await post('{"a":1}', { 'content-type': 'application/json; charset=latin1' })).toEqual({
      status: 415,
      json: { code: 'UNSUPPORTED_ENCODING' },
    })
    expect((await post('{"a":1}', { 'content-type': 'application/json; charset="UTF-8"' })).status).toBe(200)
    expect((await post('{"a":1}', { 'content-encoding': 'identity' })).status).toBe(200)
  })

  it('gives up on a body cut short, without hanging, and keeps serving', async () => {
    const url = new URL(server.url)
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(url.port), url.hostname, () => {
        socket.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n{"a":1}')
        // Half-close: the server sees the end of the body before its declared length.
        socket.end()
      })
      let text = ''
      socket.on('data', (c) => (text += c))
      socket.on('close', () => resolve(text))
      socket.on('error', reject)
    })
    // The connection is gone with the request: at most a 400 goes out first, never a 200 and never a hang.
    expect(answer).not.toMatch(/^HTTP\/1\.1 200/)
    expect((await post('{"a":1}')).status).toBe(200)
  })
})

describe('isJsonContentType', () => {
  it.each([
    ['application/json', true],
    ['Application/JSON; charset=utf-8', true],
    ['application/json;charset=UTF8', true],
    ['text/plain', false],
    ['application/jsonx', false],
    ['application/x-www-form-urlencoded', false],
    [undefined, false],
  ])('%s → %s', (header, expected) => {
    expect(isJsonContentType(header)).toBe(expected)
  })
})
