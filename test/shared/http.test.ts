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
