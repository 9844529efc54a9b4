import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connect, type Socket } from 'node:net'
import { startServer, type RunningServer } from '../../server/shared/http.ts'

/** Answers 401 at once, without reading the body, as a refused login does. */
let server: RunningServer
beforeAll(async () => {
  server = await startServer((_req, res) => {
    res.writeHead(401, { 'content-type': 'text/plain', 'content-length': 2 }).end('no')
  }, 0)
})
afterAll(() => server.close(100))

function open(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(server.port, '127.0.0.1', () => resolve(socket))
    socket.once('error', reject)
  })
}

const head = (body: string) => `POST /x HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${body}`

describe('startServer', () => {
  it('closes a connection whose body it answered without reading, instead of reading it for ever', async () => {
    const socket = await open()
    socket.on('error', () => {})
    socket.write(head('Transfer-Encoding: chunked\r\n\r\n'))
    const chunk = Buffer.alloc(64 * 1024, 0x20)
    let stop = false
    const pump = () => {
      while (!stop && socket.writable) {
        socket.write(`${chunk.length.toString(16)}\r\n`)
        socket.write(chunk)
        if (!socket.write('\r\n')) return void socket.once('drain', pump)
      }
    }
    pump()
    let answer = ''
    socket.on('data', (d) => (answer += d))
    // Cut by the server once its linger time is over, well before the test times out.
    await new Promise<void>((resolve) => socket.once('close', () => resolve()))
    stop = true
    expect(answer).toMatch(/^HTTP\/1\.1 401 Unauthorized/)
  })

  it('answers 400 to a request naming two Hosts, before any handler sees it', async () => {
    const socket = await open()
    let answer = ''
    socket.on('data', (d) => (answer += d))
    socket.write('GET /x HTTP/1.1\r\nHost: x\r\nHost: evil.example\r\n\r\n')
    await new Promise<void>((resolve) => socket.once('close', () => resolve()))
    expect(answer).toMatch(/^HTTP\/1\.1 400 /)
    expect(answer).toContain('{"success":false,"error":"A request may name one Host"}')
  })

  it('keeps the connection alive when the unread body had arrived in full', async () => {
    const socket = await open()
    let answer = ''
    socket.on('data', (d) => (answer += d))
    socket.write(head('Content-Length: 7\r\n\r\n{"a":1}'))
    socket.write(head('Content-Length: 7\r\n\r\n{"a":2}'))
    await new Promise<void>((resolve) => {
      const check = () => (answer.match(/HTTP\/1\.1 401/g)?.length === 2 ? resolve() : setTimeout(check, 10))
      check()
    })
    expect(socket.destroyed).toBe(false)
    socket.destroy()
  })
})

/** Reads the body in full, then answers with its length. */
async function startEchoLength(idleTimeoutMs: number): Promise<RunningServer> {
  return startServer(
    (req, res) => {
      let length = 0
      req.on('data', (c: Buffer) => (length += c.length))
      req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(length).length }).end(String(length)))
    },
    0,
    '127.0.0.1',
    { idleTimeoutMs },
  )
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe('idle timeouts', () => {
  let echo: RunningServer
  beforeAll(async () => {
    echo = await startEchoLength(1_200)
  })
  afterAll(() => echo.close(100))

  const connectTo = (s: RunningServer) =>
    new Promise<Socket>((resolve, reject) => {
      const socket = connect(s.port, '127.0.0.1', () => resolve(socket))
      socket.once('error', reject)
    })
  const closed = (socket: Socket) => new Promise<void>((resolve) => (socket.destroyed ? resolve() : socket.once('close', () => resolve())))

  it('closes a connection whose headers trickle in slower than the limit allows', async () => {
    const socket = await connectTo(echo)
    socket.on('error', () => {})
    const request = 'GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ' + 'a'.repeat(200)
    let sent = 0
    // One byte every 100 ms: never idle, but the headers take 20 s in all.
    const drip = setInterval(() => socket.writable && sent < request.length && socket.write(request[sent++]), 100)
    await closed(socket)
    clearInterval(drip)
    expect(sent).toBeLessThan(request.length)
  })

  it('closes a connection whose body stops moving', async () => {
    const socket = await connectTo(echo)
    socket.on('error', () => {})
    socket.write('PUT /x HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nab')
    let answer = ''
    socket.on('data', (d) => (answer += d))
    await closed(socket)
    expect(answer).toBe('')
  })

  it('never cuts a slow upload that keeps moving, however long it takes in all', async () => {
    const socket = await connectTo(echo)
    let answer = ''
    socket.on('data', (d) => (answer += d))
    socket.write('PUT /x HTTP/1.1\r\nHost: x\r\nContent-Length: 12\r\n\r\n')
    // 12 bytes over 2.4 s: twice the idle limit in all, never more than 200 ms without a byte (a wide margin under load).
    for (let i = 0; i < 12; i++) {
      await sleep(200)
      socket.write('z')
    }
    await new Promise<void>((resolve) => {
      const check = () => (answer.endsWith('\r\n\r\n12') ? resolve() : setTimeout(check, 10))
      check()
    })
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK/)
    socket.destroy()
  })

  it('does not cut a handler that takes longer than the limit to answer', async () => {
    const slow = await startServer(
      (req, res) => {
        req.resume()
        req.on('end', () => setTimeout(() => res.end('done'), 1_500))
      },
      0,
      '127.0.0.1',
      { idleTimeoutMs: 500 },
    )
    try {
      const res = await fetch(`${slow.url}/`, { method: 'POST', body: 'x' })
      expect(await res.text()).toBe('done')
    } finally {
      await slow.close(100)
    }
  })
})

describe('answers sent before the body was read', () => {
  /** Refuses every request at once, as an auth check does, whatever the body. */
  let refusing: RunningServer
  beforeAll(async () => {
    refusing = await startServer(
      (_req, res) => void res.writeHead(401, { 'www-authenticate': 'Basic realm="x"', 'content-length': 0 }).end(),
      0,
    )
  })
  afterAll(() => refusing.close(100))

  /**
   * As Python's urllib sends: the whole body first, then it reads the answer.
   * Answers what the client read, or the socket error that ended its upload.
   */
  const uploadThenRead = (head: string, body: Buffer[]) =>
    new Promise<string>((resolve) => {
      const socket = connect(refusing.port, '127.0.0.1')
      let answer = ''
      socket.on('data', (d) => (answer += d))
      socket.on('error', (err: NodeJS.ErrnoException) => resolve(`error ${err.code}`))
      socket.on('end', () => resolve(answer))
      socket.pause()
      const write = (data: string | Buffer) =>
        new Promise<void>((done) => (socket.write(data) ? done() : socket.once('drain', () => done())))
      void (async () => {
        await write(head)
        for (const part of body) await write(part)
        socket.resume()
      })()
    })
  const megabytes = (n: number) => Array.from({ length: n * 4 }, () => Buffer.alloc(256 * 1024, 0x61))

  it('lets a client that sends its whole upload before reading get the 401, not a reset', async () => {
    for (let i = 0; i < 5; i++) {
      const answer = await uploadThenRead(
        'PUT /big.bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 16777216\r\n\r\n',
        megabytes(16),
      )
      expect(answer).toMatch(/^HTTP\/1\.1 401 Unauthorized\r\n/)
    }
  })

  it('answers a malformed request line with 400, not a reset, while its body is still coming', async () => {
    const answer = await uploadThenRead('LOCK /a/with space HTTP/1.1\r\nHost: x\r\nContent-Length: 4194304\r\n\r\n', megabytes(4))
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/)
  })

  it('does the same for a chunked upload, and closes the connection after the answer', async () => {
    const chunks = megabytes(4).map((c) => Buffer.concat([Buffer.from(`${c.length.toString(16)}\r\n`), c, Buffer.from('\r\n')]))
    const answer = await uploadThenRead('PUT /big.bin HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n', [
      ...chunks,
      Buffer.from('0\r\n\r\n'),
    ])
    expect(answer).toMatch(/^HTTP\/1\.1 401 Unauthorized\r\n/)
    expect(answer).toMatch(/\r\nConnection: close\r\n/i)
  })
})
