import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connect } from 'node:net'
import { aliceAuth, basic, startBridgeOnRealGateway } from './helpers.ts'

/**
 * Two requests pipelined on one keep-alive connection, as RFC 9112 §9.3.2
 * allows: a request behind a PUT or a DELETE must see its result, on the app
 * surface and on the gateway itself.
 */
let t: Awaited<ReturnType<typeof startBridgeOnRealGateway>>
beforeAll(async () => {
  t = await startBridgeOnRealGateway()
})
afterAll(() => t.close())

/** Sends `raw` in one write and reads until `count` answers with a Content-Length have arrived. */
function pipelined(url: string, raw: string, count: number): Promise<string[]> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(raw))
    let data = ''
    socket.setEncoding('latin1')
    socket.on('error', reject)
    socket.on('data', (d: string) => {
      data += d
      const answers = data.split(/(?=HTTP\/1\.1 \d{3} )/).filter(Boolean)
      const last = answers[count - 1]
      const length = /content-length: (\d+)/i.exec(last ?? '')
      if (answers.length === count && length && last.length >= last.indexOf('\r\n\r\n') + 4 + Number(length[1])) {
        socket.destroy()
        resolve(answers)
      }
    })
  })
}

describe.each([
  ['the app surface', () => ({ url: t.url, base: '/remote.php/dav/files/alice', auth: aliceAuth })],
  ['the gateway', () => ({ url: t.gateway.url, base: '/alice', auth: basic(t.gateway.user, t.gateway.password) })],
])('pipelined requests on %s', (_surface, target) => {
  it('answers a GET pipelined behind a PUT of the same path with the new content, every time', async () => {
    const { url, base, auth } = target()
    for (let i = 0; i < 10; i++) {
      const body = `version ${i} `.repeat(1000)
      const answers = await pipelined(
        url,
        `PUT ${base}/p.txt HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth}\r\nContent-Length: ${body.length}\r\n\r\n${body}` +
          `GET ${base}/p.txt HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth}\r\n\r\n`,
        2,
      )
      expect(answers[0]).toMatch(/^HTTP\/1\.1 20[14] /)
      expect(answers[1]).toMatch(/^HTTP\/1\.1 200 /)
      expect(answers[1].endsWith(`\r\n\r\n${body}`)).toBe(true)
    }
  })

  it('answers a DELETE then a GET of the same path in order: the GET finds nothing', async () => {
    const { url, base, auth } = target()
    const put = await fetch(`${url}${base}/gone.txt`, { method: 'PUT', headers: { authorization: auth }, body: 'x' })
    expect(put.status).toBe(201)
    const answers = await pipelined(
      url,
      `DELETE ${base}/gone.txt HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth}\r\n\r\n` +
        `GET ${base}/gone.txt HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth}\r\n\r\n`,
      2,
    )
    expect(answers[0]).toMatch(/^HTTP\/1\.1 204 /)
    expect(answers[1]).toMatch(/^HTTP\/1\.1 404 /)
  })
})
