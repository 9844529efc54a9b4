/**
 * The bridge as a client of a real Nextcloud's WebDAV (the `webdav`
 * library): whether a path is in the caller's tree, in the caller's name,
 * and every way Nextcloud can be unwell told apart from "no".
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createNextcloudClient, type NextcloudClient } from '../../server/bridge/nextcloud/nextcloud-client.ts'

let answer: (req: IncomingMessage, res: ServerResponse) => void = () => {}
const seen: { method?: string; url?: string; depth?: string; authorization?: string }[] = []
const server = createServer((req, res) => {
  seen.push({ method: req.method, url: req.url, depth: req.headers.depth as string, authorization: req.headers.authorization })
  answer(req, res)
})
let client: NextcloudClient
const creds = { kind: 'authorization' as const, authorization: 'Basic YWxpY2U6cHc=' }

beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  client = createNextcloudClient({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, timeoutMs: 500 })
})
afterAll(() => server.close())

const status =
  (code: number, headers: Record<string, string> = {}) =>
  (_req: IncomingMessage, res: ServerResponse) =>
    res.writeHead(code, headers).end('<d:multistatus xmlns:d="DAV:"/>')

describe('Nextcloud WebDAV client', () => {
  it("asks a Depth 0 PROPFIND of the encoded path in the caller's name, 207 meaning yes and 404 no", async () => {
    answer = status(207, { 'content-type': 'application/xml' })
    seen.length = 0
    expect(await client.exists(creds, 'alice', '/Docs/a b#1 é.txt')).toBe(true)
    expect(seen[0]).toEqual({
      method: 'PROPFIND',
      url: '/remote.php/dav/files/alice/Docs/a%20b%231%20%C3%A9.txt',
      depth: '0',
      authorization: creds.authorization,
    })
    answer = status(404)
    expect(await client.exists(creds, 'alice', '/gone.txt')).toBe(false)
  })

  it('tells refused credentials and a missing CSRF token apart from a missing file', async () => {
    answer = status(401)
    expect(await client.exists(creds, 'alice', '/a')).toBe('refused')
    answer = status(412)
    expect(await client.exists(creds, 'alice', '/a')).toBe('csrf')
  })

  it('answers maintenance, errors, redirects and silence as Nextcloud being unwell, never as "no"', async () => {
    answer = status(503, { 'x-nextcloud-maintenance-mode': '1' })
    await expect(client.exists(creds, 'alice', '/a')).rejects.toMatchObject({ status: 503, code: 'NEXTCLOUD_MAINTENANCE' })
    answer = status(500)
    await expect(client.exists(creds, 'alice', '/a')).rejects.toMatchObject({ status: 503, code: 'NEXTCLOUD_UNAVAILABLE' })
    answer = (req, res) => (req.url?.startsWith('/login') ? status(200)(req, res) : res.writeHead(302, { location: '/login' }).end())
    await expect(client.exists(creds, 'alice', '/a')).rejects.toMatchObject({
      code: 'NEXTCLOUD_BAD_RESPONSE',
      message: expect.stringContaining('check NEXTCLOUD_URL'),
    })
    answer = () => {}
    await expect(client.exists(creds, 'alice', '/a')).rejects.toMatchObject({
      code: 'NEXTCLOUD_UNAVAILABLE',
      message: expect.stringContaining('within 500 ms'),
    })
  })
})
