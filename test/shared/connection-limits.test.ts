/**
 * What a stranger can hold: a body that trickles is cut (a whole-body limit
 * for requests, Apache mod_reqtimeout's minimum rate for uploads), and
 * connections past a global or a per-address cap get 503 before the process
 * runs out of descriptors, with one warning.
 */
import { connect, type Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createConnectionBudget } from '../../server/shared/connection-cap.ts'
import { startServer, type RunningServer, type ServerOptions } from '../../server/shared/http.ts'
import { pino } from 'pino'

let servers: RunningServer[] = []
const sockets: Socket[] = []
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy()
  await Promise.all(servers.map((s) => s.close(0)))
  servers = []
})

/** Reads the body in full, then answers its length. */
async function echoLength(options: ServerOptions): Promise<RunningServer> {
  const server = await startServer(
    (req, res) => {
      let length = 0
      req.on('data', (c: Buffer) => (length += c.length))
      req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end(String(length)))
    },
    0,
    '127.0.0.1',
    options,
  )
  servers.push(server)
  return server
}

function open(server: RunningServer, localAddress = '127.0.0.1'): Promise<Socket & { answer: () => string; ended: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port: server.port, host: '127.0.0.1', localAddress }, () =>
      resolve(Object.assign(socket, { answer: () => text, ended })),
    )
    sockets.push(socket)
    let text = ''
    socket.on('data', (d) => (text += d))
    socket.on('error', () => {})
    const ended = new Promise<void>((done) => socket.once('close', () => done()))
    socket.once('error', reject)
  })
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Sends `bytes` of `total`, one every `everyMs`, until the socket closes or `bytes` are sent. */
async function trickle(socket: Socket, bytes: number, everyMs: number): Promise<void> {
  for (let i = 0; i < bytes && !socket.destroyed && socket.writable; i++) {
    socket.write('x')
    await sleep(everyMs)
  }
}

describe('request deadlines', () => {
  it('answers 408 and closes when a request body does not arrive whole in time, however steadily it trickles', async () => {
    const server = await echoLength({ idleTimeoutMs: 5_000, bodyTimeoutMs: 800 })
    const socket = await open(server)
    socket.write('POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\n')
    // One byte every 200 ms: never idle, never done.
    void trickle(socket, 100, 200)
    await socket.ended
    expect(socket.answer()).toMatch(/^HTTP\/1\.1 408 Request Timeout/)
    expect(socket.answer()).toContain('"success":false')
  })

  it("cuts an upload that falls under the minimum rate, in the part's own envelope", async () => {
    const server = await echoLength({
      idleTimeoutMs: 5_000,
      bodyTimeoutMs: 500,
      uploadMinBytesPerSecond: 1_000,
      errorBody: (message) => ({ type: 'text/plain', text: `own: ${message}` }),
    })
    const socket = await open(server)
    socket.write('PUT /remote.php/dav/files/alice/big.bin HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n')
    // 100 bytes a second against 1 000 required.
    const sending = (async () => {
      while (!socket.destroyed && socket.writable) {
        socket.write(Buffer.alloc(20, 0x61))
        await sleep(200)
      }
    })()
    await socket.ended
    await sending
    expect(socket.answer()).toMatch(/^HTTP\/1\.1 408 /)
    expect(socket.answer()).toContain('own: The upload is too slow')
  })

  it("lets an upload at a real link's speed run past the deadline", async () => {
    const server = await echoLength({ idleTimeoutMs: 5_000, bodyTimeoutMs: 300, uploadMinBytesPerSecond: 1_000 })
    const socket = await open(server)
    const chunk = Buffer.alloc(4_000, 0x62)
    socket.write(`PUT /f HTTP/1.1\r\nHost: x\r\nContent-Length: ${chunk.length * 10}\r\nConnection: close\r\n\r\n`)
    // 4 000 bytes every 200 ms (20 kB/s) for 2 s: well past 300 ms, well over 1 kB/s.
    for (let i = 0; i < 10; i++) {
      socket.write(chunk)
      await sleep(200)
    }
    await socket.ended
    expect(socket.answer()).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n40000\r\n/)
  })

  it('closes a connection that never sends a byte after the idle limit', async () => {
    const server = await echoLength({ idleTimeoutMs: 500 })
    const socket = await open(server)
    const started = Date.now()
    await socket.ended
    expect(Date.now() - started).toBeLessThan(3_000)
  })
})

describe('connection caps', () => {
  const warnings: unknown[] = []
  const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line)) })

  it('answers 503 past the per-address cap, leaves other addresses alone, and recovers once the holder leaves', async () => {
    warnings.length = 0
    const connections = createConnectionBudget({ maxConnections: 100, maxPerAddress: 3, logger })
    const server = await echoLength({ connections })
    const held = await Promise.all([0, 1, 2].map(() => open(server, '127.0.0.2')))
    const refused = await open(server, '127.0.0.2')
    await refused.ended
    expect(refused.answer()).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n[\s\S]*Retry-After: 5/)
    const again = await open(server, '127.0.0.2')
    await again.ended
    // Someone else is served meanwhile.
    expect((await fetch(`${server.url}/status.php`)).status).toBe(200)
    // One warning, however many are refused.
    expect(warnings.filter((w) => (w as { msg: string }).msg.includes('connection cap reached'))).toHaveLength(1)
    for (const s of held) s.destroy()
    await Promise.all(held.map((s) => s.ended))
    await sleep(50)
    const back = await open(server, '127.0.0.2')
    back.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    await back.ended
    expect(back.answer()).toMatch(/^HTTP\/1\.1 200 /)
  })

  it("lets a newcomer in at the global cap by cutting the heaviest address's oldest stalled connection, never one being served", async () => {
    const connections = createConnectionBudget({ maxConnections: 5, maxPerAddress: 10, logger })
    let release = () => {}
    const released = new Promise<void>((r) => (release = r))
    const server = await startServer(
      (req, res) => {
        // /slow is a request the server is working on; anything else answers at once.
        if (req.url === '/slow') void released.then(() => res.end('done'))
        else res.end('ok')
      },
      0,
      '127.0.0.1',
      { connections },
    )
    servers.push(server)
    // The heaviest address: one request being served first (the oldest), then three trickling bodies.
    const served = await open(server, '127.0.0.2')
    served.write('GET /slow HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    await sleep(50)
    const trickling = []
    for (let i = 0; i < 3; i++) {
      const s = await open(server, '127.0.0.2')
      s.write('POST /login HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nx')
      trickling.push(s)
    }
    const light = await open(server, '127.0.0.3')
    // Past the grace a request has to show its pace.
    await sleep(2_200)
    expect(connections.held()).toBe(5)
    // Someone new is served: the oldest trickling body of 127.0.0.2 makes room, not the request being served.
    const newcomer = await open(server, '127.0.0.4')
    newcomer.write('GET /status.php HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    await newcomer.ended
    expect(newcomer.answer()).toMatch(/^HTTP\/1\.1 200 /)
    await trickling[0].ended
    expect(trickling.slice(1).every((s) => !s.destroyed) && !light.destroyed).toBe(true)
    release()
    await served.ended
    expect(served.answer()).toMatch(/^HTTP\/1\.1 200 [\s\S]*done$/)
  })

  it('at the global cap of one connection per address, cuts the oldest idle one for a newcomer but never a body sent at a real pace', async () => {
    const connections = createConnectionBudget({ maxConnections: 2, maxPerAddress: 10, logger })
    const server = await echoLength({ connections })
    // An upload at 20 KiB/s, then an idle connection.
    const uploading = await open(server, '127.0.0.2')
    uploading.write('PUT /f HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 100000\r\n\r\n')
    const pace = setInterval(() => uploading.write(Buffer.alloc(2_048)), 100)
    const idle = await open(server, '127.0.0.3')
    await sleep(2_200)
    const newcomer = await open(server, '127.0.0.4')
    newcomer.write('GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nok')
    await idle.ended
    // With the idle one gone, nothing else is stalled: the next newcomer is refused.
    const refused = await open(server, '127.0.0.5')
    await refused.ended
    expect(refused.answer()).toMatch(/^HTTP\/1\.1 503 /)
    clearInterval(pace)
    expect(uploading.destroyed).toBe(false)
    await sleep(50)
    expect(newcomer.answer()).toMatch(/^HTTP\/1\.1 200 /)
  })

  it('counts every server of the process against one global cap; a trusted proxy is not held to the per-address one', async () => {
    const connections = createConnectionBudget({ maxConnections: 4, maxPerAddress: 1, logger })
    const a = await echoLength({ connections, unlimitedAddress: (address) => address === '127.0.0.1' })
    const b = await echoLength({ connections })
    // The proxy's address holds three at once on a; a fourth connection, to b, reaches the global cap.
    await Promise.all([0, 1, 2].map(() => open(a)))
    await open(b, '127.0.0.3')
    const refused = await open(b, '127.0.0.4')
    await refused.ended
    expect(refused.answer()).toMatch(/^HTTP\/1\.1 503 /)
    expect(refused.answer()).toContain('"success":false')
    expect(connections.held()).toBe(4)
  })
})
