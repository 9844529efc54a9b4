import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { aliceAuth, startBridgeOnRealGateway } from './helpers.ts'

/**
 * The app surface serves the preview page and users' uploads from one origin:
 * an uploaded page must never run there. Downloads carry what Nextcloud sends
 * (nosniff, a script-forbidding CSP) and active types come as attachments.
 */
describe('downloads of uploaded HTML, SVG and XML', () => {
  let t: Awaited<ReturnType<typeof startBridgeOnRealGateway>>
  const url = (name: string) => `${t.url}/remote.php/dav/files/alice/${encodeURIComponent(name)}`
  const put = (name: string, body: string, type?: string) =>
    fetch(url(name), { method: 'PUT', headers: { authorization: aliceAuth, ...(type ? { 'content-type': type } : {}) }, body })
  beforeAll(async () => {
    t = await startBridgeOnRealGateway()
    expect((await put('evil.html', '<script>fetch("/ocs/v2.php/apps/gateway/admin/settings")</script>')).status).toBe(201)
    expect((await put('logo.svg', '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>')).status).toBe(201)
    expect((await put('notes.txt', 'plain words')).status).toBe(201)
    expect((await put('sneaky.txt', '<script>alert(1)</script>', 'text/html')).status).toBe(201)
    expect((await put('résumé.xhtml', '<html xmlns="http://www.w3.org/1999/xhtml"/>', 'application/xhtml+xml')).status).toBe(201)
  })
  afterAll(() => t.close())

  it.each(['evil.html', 'logo.svg', 'sneaky.txt', 'résumé.xhtml'])('serves %s as an attachment that cannot run scripts', async (name) => {
    for (const method of ['GET', 'HEAD']) {
      const res = await fetch(url(name), { method, headers: { authorization: aliceAuth } })
      expect(res.status).toBe(200)
      expect(res.headers.get('x-content-type-options')).toBe('nosniff')
      expect(res.headers.get('content-security-policy')).toMatch(/default-src 'none'.*sandbox/)
      expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="[^"]+"; filename\*=UTF-8''/)
      expect(res.headers.get('content-disposition')).toContain(encodeURIComponent(name))
    }
  })

  it('still shows plain files inline, with nosniff', async () => {
    const res = await fetch(url('notes.txt'), { headers: { authorization: aliceAuth } })
    expect(await res.text()).toBe('plain words')
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    expect(res.headers.get('content-disposition')).toBeNull()
  })
})
